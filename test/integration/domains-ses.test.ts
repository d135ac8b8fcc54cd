import { createPrivateKey, createPublicKey, randomUUID } from 'node:crypto';
import { createServer, type IncomingMessage, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { createDnsLookup } from '../../activities/dns-lookup';
import { createDomainActivities } from '../../activities/domains';
import { createSesClients } from '../../providers/ses/clients';
import { createSesDomainIdentities } from '../../providers/ses/domain-identity';
import { configKeyring, loadConfig } from '../../core/config';
import { domainRecords } from '../../core/dns-records';
import { type DomainRecord, findDomain, saveDomainCheck } from '../../db/repositories/domains';
import { createSequelize } from '../../db/sequelize';
import { startDnsServer, type TestDnsServer } from '../helpers/dns-server';
import { createTestWorkspace } from '../helpers/workspaces';

interface Identity {
  origin: 'AWS_SES' | 'EXTERNAL';
  selector: string | null;
  privateKey: string | null;
  status: 'PENDING' | 'SUCCESS' | 'FAILED';
}

/**
 * SES v2's identity endpoints as the REST-JSON protocol defines them. moto accepts BYODKIM but answers with
 * a timestamp the JS SDK cannot parse (docs/aws-stand-in.md), so this small stand-in plays SES instead; it
 * proves what we send and how we react to SES's answers, not that AWS accepts our key.
 */
async function startSesStandIn() {
  const identities = new Map<string, Identity>();
  const calls: string[] = [];
  /** The region each call about an identity was signed for (its SigV4 credential scope): its client's region. */
  const regions: Array<{ identity: string; region: string }> = [];
  const body = async (req: IncomingMessage) => {
    let text = '';
    for await (const chunk of req) text += chunk;
    return text ? (JSON.parse(text) as Record<string, unknown>) : {};
  };
  const describe = (identity: Identity) => ({
    IdentityType: 'DOMAIN',
    VerifiedForSendingStatus: identity.status === 'SUCCESS',
    DkimAttributes: {
      SigningEnabled: true,
      Status: identity.status,
      SigningAttributesOrigin: identity.origin,
      Tokens: identity.selector ? [identity.selector] : ['awsgenerated1'],
    },
  });
  const server: Server = createServer(async (req, res) => {
    const path = decodeURIComponent(req.url ?? '');
    const reply = (status: number, payload: object, errorType?: string) => {
      res.writeHead(status, { 'content-type': 'application/json', ...(errorType && { 'x-amzn-errortype': errorType }) });
      res.end(JSON.stringify(payload));
    };
    const input = await body(req);
    calls.push(`${req.method} ${path}`);
    const signing = /^\/v2\/email\/identities\/([^/]+)\/dkim\/signing$/.exec(path);
    const single = /^\/v2\/email\/identities\/([^/]+)$/.exec(path);
    const scope = /Credential=[^/]+\/\d{8}\/([^/]+)\/ses\/aws4_request/.exec(req.headers.authorization ?? '');
    regions.push({ identity: String(input.EmailIdentity ?? signing?.[1] ?? single?.[1]), region: scope?.[1] ?? 'unsigned' });
    if (req.method === 'POST' && path === '/v2/email/identities') {
      const name = String(input.EmailIdentity);
      if (identities.has(name)) return reply(400, { message: `${name} already exists` }, 'AlreadyExistsException');
      const attributes = input.DkimSigningAttributes as { DomainSigningSelector: string; DomainSigningPrivateKey: string } | undefined;
      const identity: Identity = attributes
        ? { origin: 'EXTERNAL', selector: attributes.DomainSigningSelector, privateKey: attributes.DomainSigningPrivateKey, status: 'PENDING' }
        : { origin: 'AWS_SES', selector: null, privateKey: null, status: 'PENDING' };
      identities.set(name, identity);
      return reply(200, describe(identity));
    }
    if (req.method === 'PUT' && signing) {
      const identity = identities.get(signing[1]);
      const attributes = input.SigningAttributes as { DomainSigningSelector: string; DomainSigningPrivateKey: string };
      if (!identity) return reply(404, { message: 'not found' }, 'NotFoundException');
      Object.assign(identity, { origin: input.SigningAttributesOrigin, selector: attributes.DomainSigningSelector, privateKey: attributes.DomainSigningPrivateKey, status: 'PENDING' });
      return reply(200, { DkimStatus: 'PENDING', DkimTokens: [attributes.DomainSigningSelector] });
    }
    if (req.method === 'GET' && single) {
      const identity = identities.get(single[1]);
      return identity ? reply(200, describe(identity)) : reply(404, { message: 'not found' }, 'NotFoundException');
    }
    reply(400, { message: `unexpected ${req.method} ${path}` }, 'BadRequestException');
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const endpoint = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return { identities, calls, regions, endpoint, close: () => new Promise((resolve) => server.close(resolve)) };
}

describe('domains with SES as the provider (BYODKIM)', () => {
  const config = loadConfig(process.env);
  const keyring = configKeyring(config);
  const settings = { spfInclude: 'amazonses.com', inboundMxHost: 'inbound.messaging.local' };
  const db = createSequelize(config.DATABASE_URL);
  let dns: TestDnsServer;
  let ses: Awaited<ReturnType<typeof startSesStandIn>>;
  let activities: ReturnType<typeof createDomainActivities>;

  beforeAll(async () => {
    dns = await startDnsServer();
    ses = await startSesStandIn();
    const clients = createSesClients({ overrides: { endpoint: ses.endpoint, credentials: { accessKeyId: 'test', secretAccessKey: 'test' } } });
    activities = createDomainActivities({
      db,
      lookup: createDnsLookup({ servers: [dns.address] }),
      settings,
      keyring,
      ses: createSesDomainIdentities(clients),
    });
  });
  afterAll(async () => {
    // Set-up may have failed part-way: close what exists.
    await Promise.all([dns?.close(), ses?.close(), db.close()]);
  });

  /** A domain whose records are all published correctly. */
  async function publishedDomain(options: { region?: string; name?: string } = {}): Promise<DomainRecord> {
    const { record } = await createTestWorkspace(db, { domain: { name: options.name ?? `d${randomUUID().slice(0, 12)}.example.com`, region: options.region ?? 'eu-west-1', verified: false } });
    for (const published of domainRecords(record, settings)) dns.setTxt(published.name, published.value);
    return record;
  }

  const check = (domain: DomainRecord) => activities.checkDomain({ workspaceId: domain.workspaceId, domainId: domain.id, failPending: true });

  it('registers the domain with our key and selector, and stays pending until SES has seen the DKIM record', async () => {
    const domain = await publishedDomain();
    const first = await check(domain);
    expect(first).toMatchObject({
      found: true,
      status: 'pending',
      detail: `The DNS records of ${domain.name} are correct; Amazon SES is still verifying its DKIM record (SES status PENDING). This usually takes a few minutes and is checked again automatically.`,
    });
    const identity = ses.identities.get(domain.name);
    expect(identity).toMatchObject({ origin: 'EXTERNAL', selector: domain.dkimSelector });
    // The key SES received is the private half of the public key the customer published.
    const received = createPrivateKey({ key: Buffer.from(identity?.privateKey ?? '', 'base64'), format: 'der', type: 'pkcs1' });
    expect(createPublicKey(received).export({ type: 'spki', format: 'der' }).toString('base64')).toBe(domain.dkimPublicKey);

    if (identity) identity.status = 'SUCCESS';
    expect(await check(domain)).toMatchObject({ status: 'verified', detail: null });
    expect((await findDomain(db, domain.workspaceId, domain.id))?.status).toBe('verified');
  });

  it('an identity SES already signs with its own keys is switched to ours', async () => {
    const domain = await publishedDomain();
    ses.identities.set(domain.name, { origin: 'AWS_SES', selector: null, privateKey: null, status: 'SUCCESS' });
    ses.calls.length = 0;
    expect(await check(domain)).toMatchObject({ status: 'pending' });
    expect(ses.calls).toEqual([
      'POST /v2/email/identities',
      `GET /v2/email/identities/${domain.name}`,
      `PUT /v2/email/identities/${domain.name}/dkim/signing`,
      `GET /v2/email/identities/${domain.name}`,
    ]);
    expect(ses.identities.get(domain.name)).toMatchObject({ origin: 'EXTERNAL', selector: domain.dkimSelector, status: 'PENDING' });
  });

  it('SES gave up on the DKIM record (FAILED): setting the key again restarts its check', async () => {
    const domain = await publishedDomain();
    await check(domain);
    const identity = ses.identities.get(domain.name);
    if (identity) identity.status = 'FAILED';
    expect(await check(domain)).toMatchObject({ status: 'pending', detail: expect.stringMatching(/SES status FAILED/) });
    expect(ses.identities.get(domain.name)?.status).toBe('PENDING');
  });

  it('records that do not check are never sent to SES', async () => {
    const domain = await publishedDomain();
    dns.remove(`_dmarc.${domain.name}`);
    expect(await check(domain)).toMatchObject({ status: 'failed' });
    expect(ses.identities.has(domain.name)).toBe(false);
  });

  it('each domain is registered in its own region, through that region\'s client', async () => {
    const dublin = await publishedDomain({ region: 'eu-west-1' });
    const sydney = await publishedDomain({ region: 'ap-southeast-2' });
    ses.regions.length = 0;
    await check(dublin);
    await check(sydney);
    const regionsOf = (name: string) => ses.regions.filter((entry) => entry.identity === name).map((entry) => entry.region);
    expect(regionsOf(dublin.name)).toEqual(['eu-west-1', 'eu-west-1']);
    expect(regionsOf(sydney.name)).toEqual(['ap-southeast-2', 'ap-southeast-2']);
  });

  it('a name another workspace has verified is never registered with SES: SES keeps the owner\'s key, the claim fails', async () => {
    const owner = await publishedDomain();
    // Both claimed the name while it was unverified; the owner verified first.
    const claimant = await publishedDomain({ name: owner.name });
    await saveDomainCheck(db, owner.workspaceId, owner.id, { status: 'verified', detail: null, recordChecks: [] });
    ses.identities.set(owner.name, { origin: 'EXTERNAL', selector: owner.dkimSelector, privateKey: 'owner-key', status: 'SUCCESS' });
    ses.calls.length = 0;
    expect(await check(claimant)).toMatchObject({
      status: 'failed',
      detail: `${owner.name} is already verified by another workspace. A domain sends for one workspace only, the first to verify it, so this claim cannot be verified while that one stays verified.`,
    });
    expect(ses.calls).toEqual([]);
    expect(ses.identities.get(owner.name)).toMatchObject({ selector: owner.dkimSelector, privateKey: 'owner-key' });
  });
});
