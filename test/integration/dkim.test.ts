import { randomUUID } from 'node:crypto';
import { dkimVerify } from 'mailauth/lib/dkim/verify';
import MailComposer from 'nodemailer/lib/mail-composer';
import { createDkimSigner, loadDkimKey } from '../../activities/dkim';
import { configKeyring, loadConfig } from '../../core/config';
import { generateDkimKeyPair } from '../../core/dkim-keys';
import { dkimRecordName, dkimValue } from '../../core/dns-records';
import { saveDomainCheck } from '../../db/repositories/domains';
import { PermanentSendError } from '../../core/delivery';
import { createSequelize } from '../../db/sequelize';
import { startDnsServer, type TestDnsServer } from '../helpers/dns-server';
import { createTestWorkspace } from '../helpers/workspaces';

/**
 * Outgoing mail is signed with the domain's key (decisions). The proof is an independent verifier
 * (mailauth, not our code) fetching the published key from a DNS server, as a receiving server would.
 */
describe('DKIM signing of outgoing mail', () => {
  const config = loadConfig(process.env);
  const keyring = configKeyring(config);
  const db = createSequelize(config.DATABASE_URL);
  const sign = createDkimSigner(db, keyring);
  let dns: TestDnsServer;

  beforeAll(async () => {
    dns = await startDnsServer();
  });
  afterAll(async () => {
    await dns.close();
    await db.close();
  });

  /** A workspace with one domain whose DKIM record is published, as after verification. */
  async function domainWithPublishedKey() {
    const { workspaceId, domain: name, domainId, dkim } = await createTestWorkspace(db, { domain: { name: `d${randomUUID().slice(0, 12)}.example.com` } });
    dns.setTxt(dkimRecordName(dkim.selector, name), dkimValue(dkim.publicKey));
    return { workspaceId, name, selector: dkim.selector, domainId };
  }

  const compose = (from: string) =>
    new MailComposer({
      from,
      to: 'Someone <someone@example.org>',
      subject: 'Your receipt — № 42',
      text: 'Thanks for your order.\n',
      html: '<p>Thanks for your order.</p>',
      attachments: [{ filename: 'receipt.txt', content: 'line one\r\nline two\r\n' }],
    })
      .compile()
      .build();

  it('a message from the domain verifies with mailauth against the published record', async () => {
    const domain = await domainWithPublishedKey();
    const signed = await sign(domain.workspaceId, `billing@${domain.name}`, await compose(`"Acme Billing" <billing@${domain.name}>`));
    const verdict = await dkimVerify(signed, { resolver: dns.resolver });
    expect(verdict.results).toHaveLength(1);
    expect(verdict.results[0]).toMatchObject({ signingDomain: domain.name, selector: domain.selector, status: { result: 'pass', aligned: domain.name } });
    expect(verdict.results[0]).toMatchObject({ algo: 'rsa-sha256', format: 'relaxed/relaxed' });
  });

  it('a message changed after signing, or a key that no longer matches the record, no longer passes', async () => {
    const domain = await domainWithPublishedKey();
    const signed = await sign(domain.workspaceId, `billing@${domain.name}`, await compose(`billing@${domain.name}`));
    const tampered = Buffer.from(signed.toString('utf8').replace('Thanks for your order.', 'Pay to account 666.'));
    // mailauth reports a body that no longer matches its hash as neutral (RFC 6376 §6.3 leaves the word to it).
    expect((await dkimVerify(tampered, { resolver: dns.resolver })).results[0].status).toMatchObject({ result: 'neutral', comment: 'body hash did not verify' });

    const rotated = await generateDkimKeyPair();
    dns.setTxt(dkimRecordName(domain.selector, domain.name), dkimValue(rotated.publicKey));
    expect((await dkimVerify(signed, { resolver: dns.resolver })).results[0].status.result).toBe('fail');
  });

  it('the key is found by the from address whatever its case or display name, and only in its own workspace', async () => {
    const domain = await domainWithPublishedKey();
    expect(await loadDkimKey(db, keyring, domain.workspaceId, `Billing <BILLING@${domain.name.toUpperCase()}>`)).toMatchObject({
      domainName: domain.name,
      selector: domain.selector,
      privateKey: expect.objectContaining({ type: 'private', asymmetricKeyType: 'rsa' }),
    });
    const other = await createTestWorkspace(db);
    expect(await loadDkimKey(db, keyring, other.workspaceId, `billing@${domain.name}`)).toBeNull();
  });

  it('a sender domain the workspace has not added is refused, never sent unsigned', async () => {
    const { workspaceId } = await createTestWorkspace(db);
    const raw = await compose('someone@not-added.example.com');
    await expect(sign(workspaceId, 'someone@not-added.example.com', raw)).rejects.toThrow(PermanentSendError);
    await expect(sign(workspaceId, 'someone@not-added.example.com', raw)).rejects.toThrow(
      'sender_not_authorized: the domain not-added.example.com is not a verified domain of this workspace',
    );
  });

  it("another workspace's verified domain is refused: its key signs only its own workspace's mail", async () => {
    const domain = await domainWithPublishedKey();
    const other = await createTestWorkspace(db);
    const raw = await compose(`ceo@${domain.name}`);
    await expect(sign(other.workspaceId, `ceo@${domain.name}`, raw)).rejects.toThrow(/^sender_not_authorized/);
  });

  it('a domain whose verification failed has no key to sign with', async () => {
    const domain = await domainWithPublishedKey();
    await saveDomainCheck(db, domain.workspaceId, domain.domainId, { status: 'failed', detail: 'records removed', recordChecks: [] });
    expect(await loadDkimKey(db, keyring, domain.workspaceId, `news@${domain.name}`)).toBeNull();
  });
});
