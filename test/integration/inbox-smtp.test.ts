import { randomUUID } from 'node:crypto';
import { connect, type Socket } from 'node:net';
import nodemailer from 'nodemailer';
import { dkimSign } from 'mailauth';
import { pino } from 'pino';
import { generate } from 'selfsigned';
import { QueryTypes, type Sequelize } from 'sequelize';
import type { SMTPServer } from 'smtp-server';
import { loadConfig } from '../../core/config';
import { generateDkimKeyPair } from '../../core/dkim-keys';
import { dkimRecordName, dkimValue } from '../../core/dns-records';
import type { InboundAuthResults } from '../../core/inbox/auth-results';
import { type BlobStore, blobStoreOptions, createBlobStore } from '../../db/blob-store';
import { findDomainByName, setInboundEnabled } from '../../db/repositories/domains';
import { createSequelize } from '../../db/sequelize';
import type { AcceptedInboundMessage } from '../../workers/inbox/acceptance';
import { inboundLimits, type InboundLimits } from '../../workers/inbox/limits';
import { closeInboundSmtp, createInboundSmtpServer, listenInboundSmtp } from '../../workers/inbox/smtp-server';
import { startDnsServer, type TestDnsServer } from '../helpers/dns-server';
import { addTestDomain, createTestWorkspace } from '../helpers/workspaces';

const MAX_BYTES = 64 * 1024;

interface StoredRow {
  id: string;
  inbox_id: string;
  status: string;
  direction: string;
  message_id_header: string | null;
  envelope_from: string | null;
  envelope_to: string;
  raw_blob_key: string;
  raw_size: number;
  auth: InboundAuthResults;
}

/** Real SMTP sessions (nodemailer as the sending server) against the inbound listener, real Postgres, S3 and DNS. */
describe('the inbound SMTP listener', () => {
  const config = loadConfig(process.env);
  let db: Sequelize;
  let blobs: BlobStore;
  let dns: TestDnsServer;
  let server: SMTPServer;
  let port: number;
  const handedOff: AcceptedInboundMessage[] = [];
  let workspaceId: string;
  let domain: string;
  let inboxId: string;

  async function addInbox(workspace: string, domainName: string, localPart: string): Promise<string> {
    const found = await findDomainByName(db, workspace, domainName);
    if (!found) throw new Error('no domain');
    const id = randomUUID();
    await db.query('INSERT INTO inboxes (id, workspace_id, domain_id, local_part) VALUES ($1, $2, $3, $4)', { bind: [id, workspace, found.id, localPart] });
    return id;
  }

  async function inboundDomain(workspace: string): Promise<string> {
    const name = (await addTestDomain(db, workspace)).domain;
    const found = await findDomainByName(db, workspace, name);
    await setInboundEnabled(db, workspace, found!.id, true);
    return name;
  }

  /** The configured limits with this file's small message size; a test narrows what it is about. */
  const limits = (overrides: Partial<InboundLimits> = {}): InboundLimits => ({ ...inboundLimits(config), maxMessageBytes: MAX_BYTES, maxConnections: 50, ...overrides });

  const rowsOf = (inbox: string) =>
    db.query<StoredRow>('SELECT * FROM inbox_messages WHERE inbox_id = $1 ORDER BY created_at', { bind: [inbox], type: QueryTypes.SELECT });

  function send(message: { from: string; to: string | string[]; raw: string | Buffer }, options: { requireTLS?: boolean } = {}) {
    const transport = nodemailer.createTransport({
      host: '127.0.0.1',
      port,
      secure: false,
      ignoreTLS: !options.requireTLS,
      requireTLS: options.requireTLS ?? false,
      tls: { rejectUnauthorized: false },
      name: 'sender.example.net',
    });
    return transport.sendMail({ envelope: { from: message.from, to: message.to }, raw: message.raw }).finally(() => transport.close());
  }

  const rawMail = (from: string, to: string, extra = '') =>
    `From: ${from}\r\nTo: ${to}\r\nSubject: Hello\r\nMessage-ID: <${randomUUID()}@sender.example.net>\r\n${extra}MIME-Version: 1.0\r\nContent-Type: text/plain\r\n\r\nHi there\r\n`;

  beforeAll(async () => {
    db = createSequelize(config.DATABASE_URL);
    blobs = createBlobStore(blobStoreOptions(config));
    dns = await startDnsServer();
    const pems = await generate([{ name: 'commonName', value: 'inbound.messaging.local' }], { keySize: 2048, algorithm: 'sha256' });
    server = createInboundSmtpServer({
      db,
      blobs,
      resolver: dns.resolver,
      mxHost: 'inbound.messaging.local',
      limits: limits(),
      tls: { cert: Buffer.from(pems.cert), key: Buffer.from(pems.private) },
      logger: pino({ level: 'silent' }),
      handOff: async (accepted) => {
        handedOff.push(...accepted);
      },
      closeTimeoutMs: 200,
    });
    port = await listenInboundSmtp(server, '127.0.0.1', 0);
    ({ workspaceId } = await createTestWorkspace(db));
    domain = await inboundDomain(workspaceId);
    inboxId = await addInbox(workspaceId, domain, 'Support');
  });

  afterAll(async () => {
    await closeInboundSmtp(server);
    await dns.close();
    blobs.close();
    await db.close();
  });

  it('mail to an inbox (any case of its address) is stored raw in the blob store with a received row, then handed off', async () => {
    const raw = rawMail('alice@sender.example.net', `support@${domain}`);
    const info = await send({ from: 'alice@sender.example.net', to: `SUPPORT@${domain.toUpperCase()}`, raw });
    expect(info.accepted).toHaveLength(1);

    const [row] = await rowsOf(inboxId);
    expect(row).toMatchObject({ status: 'received', direction: 'in', envelope_from: 'alice@sender.example.net', raw_size: Buffer.byteLength(raw) });
    expect(row.message_id_header).toMatch(/@sender\.example\.net$/);
    expect((await blobs.get(row.raw_blob_key, MAX_BYTES))?.toString()).toBe(raw);
    expect(row.raw_blob_key.startsWith(`inbound/${workspaceId}/`)).toBe(true);
    expect(handedOff).toContainEqual({ id: row.id, workspaceId, inboxId });
  });

  it('the same Message-ID delivered again (a sender retrying) is answered 250 and stored once', async () => {
    const inbox = await addInbox(workspaceId, domain, 'retry');
    const raw = rawMail('alice@sender.example.net', `retry@${domain}`);
    await send({ from: 'alice@sender.example.net', to: `retry@${domain}`, raw });
    await send({ from: 'alice@sender.example.net', to: `retry@${domain}`, raw });
    expect(await rowsOf(inbox)).toHaveLength(1);
  });

  it('an unknown mailbox of an inbound domain is refused with 550 at RCPT, and nothing is stored', async () => {
    const error = await send({ from: 'alice@sender.example.net', to: `nobody@${domain}`, raw: rawMail('alice@sender.example.net', `nobody@${domain}`) }).catch((e: unknown) => e);
    expect(error).toMatchObject({ responseCode: 550, command: 'RCPT TO' });
    expect(String((error as Error).message)).toMatch(/5\.1\.1 No such mailbox/);
  });

  it('any other domain (foreign, or ours without inbound enabled) is refused with 550 at RCPT: no relaying', async () => {
    const foreign = await send({ from: 'a@sender.example.net', to: 'someone@gmail.com', raw: rawMail('a@sender.example.net', 'someone@gmail.com') }).catch((e: unknown) => e);
    expect(foreign).toMatchObject({ responseCode: 550, command: 'RCPT TO' });

    const other = await createTestWorkspace(db, { domain: true });
    const outboundOnly = other.domain;
    const inbox = await addInbox(other.workspaceId, outboundOnly, 'hello');
    const refused = await send({ from: 'a@sender.example.net', to: `hello@${outboundOnly}`, raw: rawMail('a@sender.example.net', `hello@${outboundOnly}`) }).catch((e: unknown) => e);
    expect(refused).toMatchObject({ responseCode: 550, command: 'RCPT TO' });
    expect(await rowsOf(inbox)).toHaveLength(0);
  });

  it('a blocked sender is refused with 550 at RCPT; other senders still get through', async () => {
    const { workspaceId: workspace } = await createTestWorkspace(db);
    const name = await inboundDomain(workspace);
    const inbox = await addInbox(workspace, name, 'team');
    await db.query("INSERT INTO email_rules (id, workspace_id, action, match_type, value) VALUES ($1, $2, 'block', 'domain', 'spam.example.net')", {
      bind: [randomUUID(), workspace],
    });

    const blocked = await send({ from: 'bot@mail.spam.example.net', to: `team@${name}`, raw: rawMail('bot@mail.spam.example.net', `team@${name}`) }).catch((e: unknown) => e);
    expect(blocked).toMatchObject({ responseCode: 550, command: 'RCPT TO' });
    expect(String((blocked as Error).message)).toMatch(/Sender blocked/);
    await send({ from: 'friend@sender.example.net', to: `team@${name}`, raw: rawMail('friend@sender.example.net', `team@${name}`) });
    expect((await rowsOf(inbox)).map((row) => row.envelope_from)).toEqual(['friend@sender.example.net']);
  });

  it('with an allow list, a sender outside it (envelope and From) is refused with 550 after DATA and one inside it is accepted', async () => {
    const { workspaceId: workspace } = await createTestWorkspace(db);
    const name = await inboundDomain(workspace);
    const inbox = await addInbox(workspace, name, 'agent');
    await db.query("INSERT INTO email_rules (id, workspace_id, action, match_type, value) VALUES ($1, $2, 'allow', 'address', 'boss@partner.example.net')", {
      bind: [randomUUID(), workspace],
    });

    const outsider = await send({ from: 'someone@sender.example.net', to: `agent@${name}`, raw: rawMail('someone@sender.example.net', `agent@${name}`) }).catch((e: unknown) => e);
    expect(outsider).toMatchObject({ responseCode: 550, command: 'DATA' });
    expect(String((outsider as Error).message)).toMatch(/not accepted/);
    await send({ from: 'Boss@Partner.example.net', to: `agent@${name}`, raw: rawMail('boss@partner.example.net', `agent@${name}`) });
    expect(await rowsOf(inbox)).toHaveLength(1);
  });

  it('an allowed From sent through an ESP (its bounce address as envelope sender) is accepted', async () => {
    const { workspaceId: workspace } = await createTestWorkspace(db);
    const name = await inboundDomain(workspace);
    const inbox = await addInbox(workspace, name, 'agent');
    await db.query("INSERT INTO email_rules (id, workspace_id, action, match_type, value) VALUES ($1, $2, 'allow', 'domain', 'partner.example.net')", {
      bind: [randomUUID(), workspace],
    });
    const info = await send({ from: '0100-bounce@amazonses.com', to: `agent@${name}`, raw: rawMail('"The Boss" <boss@partner.example.net>', `agent@${name}`) });
    expect(info.accepted).toHaveLength(1);
    expect(await rowsOf(inbox)).toHaveLength(1);
  });

  it('a blocked From behind an innocent envelope sender is refused with 550 after DATA, and nothing is stored', async () => {
    const { workspaceId: workspace } = await createTestWorkspace(db);
    const name = await inboundDomain(workspace);
    const inbox = await addInbox(workspace, name, 'team');
    await db.query("INSERT INTO email_rules (id, workspace_id, action, match_type, value) VALUES ($1, $2, 'block', 'address', 'pest@sender.example.net')", {
      bind: [randomUUID(), workspace],
    });
    const refused = await send({ from: 'bounces@esp.example.org', to: `team@${name}`, raw: rawMail('Pest <PEST@sender.example.net>', `team@${name}`) }).catch((e: unknown) => e);
    expect(refused).toMatchObject({ responseCode: 550, command: 'DATA' });
    expect(String((refused as Error).message)).toMatch(/Sender blocked/);
    expect(await rowsOf(inbox)).toHaveLength(0);
  });

  it('one message to two workspaces, one of which blocks its From, is stored only for the other', async () => {
    const { workspaceId: blocking } = await createTestWorkspace(db);
    const blockingDomain = await inboundDomain(blocking);
    const blockingInbox = await addInbox(blocking, blockingDomain, 'desk');
    await db.query("INSERT INTO email_rules (id, workspace_id, action, match_type, value) VALUES ($1, $2, 'block', 'domain', 'sender.example.net')", {
      bind: [randomUUID(), blocking],
    });
    const open = await addInbox(workspaceId, domain, 'open-desk');
    const info = await send({
      from: 'bounces@esp.example.org', to: [`open-desk@${domain}`, `desk@${blockingDomain}`],
      raw: rawMail('alice@sender.example.net', `open-desk@${domain}, desk@${blockingDomain}`),
    });
    expect(info.accepted).toHaveLength(2);
    expect(await rowsOf(open)).toHaveLength(1);
    expect(await rowsOf(blockingInbox)).toHaveLength(0);
  });

  it('a message larger than the limit is refused with 552 and nothing is stored', async () => {
    const inbox = await addInbox(workspaceId, domain, 'big');
    const raw = rawMail('alice@sender.example.net', `big@${domain}`) + 'x'.repeat(MAX_BYTES + 10);
    const error = await send({ from: 'alice@sender.example.net', to: `big@${domain}`, raw }).catch((e: unknown) => e);
    expect(error).toMatchObject({ responseCode: 552 });
    expect(await rowsOf(inbox)).toHaveLength(0);
  });

  it('malformed MIME (no headers end, broken boundary, bare bytes) is stored as received without crashing the listener', async () => {
    const inbox = await addInbox(workspaceId, domain, 'broken');
    const raw = Buffer.concat([
      Buffer.from('From: <<<not an address\r\nContent-Type: multipart/mixed; boundary="never-closed"\r\nSubject: =?utf-8?B?broken*base64?=\r\n\r\n--never-closed\r\nContent-Transfer-Encoding: base64\r\n\r\n!!!not base64!!!\r\n'),
      Buffer.from([0xff, 0xfe, 0x00, 0x80, 0x0d, 0x0a]),
    ]);
    await send({ from: 'alice@sender.example.net', to: `broken@${domain}`, raw });
    const [row] = await rowsOf(inbox);
    expect(row).toMatchObject({ status: 'received', message_id_header: null });
    expect((await blobs.get(row.raw_blob_key, MAX_BYTES))?.equals(raw)).toBe(true);
    // The listener still takes mail after it.
    await send({ from: 'alice@sender.example.net', to: `broken@${domain}`, raw: rawMail('alice@sender.example.net', `broken@${domain}`) });
    expect(await rowsOf(inbox)).toHaveLength(2);
  });

  it('a spoof of a domain whose DMARC policy it fails is accepted and flagged dmarc fail; SPF is evaluated for the envelope', async () => {
    const inbox = await addInbox(workspaceId, domain, 'ceo');
    const bank = `bank-${randomUUID().slice(0, 8)}.example.org`;
    dns.setTxt(bank, 'v=spf1 ip4:192.0.2.1 -all');
    dns.setTxt(`_dmarc.${bank}`, 'v=DMARC1; p=reject');
    await send({ from: `security@${bank}`, to: `ceo@${domain}`, raw: rawMail(`security@${bank}`, `ceo@${domain}`) });
    const [row] = await rowsOf(inbox);
    expect(row.auth.spf).toEqual({ result: 'fail', domain: bank });
    expect(row.auth.dmarc).toEqual({ result: 'fail', headerFrom: [`security@${bank}`], domain: 'example.org', policy: 'reject' });
    expect(row.auth.dkim).toEqual([]);
  });

  it('a message DKIM-signed by its From domain passes DKIM (aligned) and DMARC although SPF fails', async () => {
    const inbox = await addInbox(workspaceId, domain, 'signed');
    const shop = `shop-${randomUUID().slice(0, 8)}.example.org`;
    const key = await generateDkimKeyPair();
    dns.setTxt(dkimRecordName(key.selector, shop), dkimValue(key.publicKey));
    dns.setTxt(shop, 'v=spf1 -all');
    dns.setTxt(`_dmarc.${shop}`, 'v=DMARC1; p=reject');
    const unsigned = rawMail(`orders@${shop}`, `signed@${domain}`);
    const signer = { signingDomain: shop, selector: key.selector, privateKey: key.privateKeyPem };
    // mailauth signs with each entry of signatureData (the top-level fields alone sign nothing).
    const { signatures } = await dkimSign(unsigned, { ...signer, signatureData: [signer] });
    await send({ from: `orders@${shop}`, to: `signed@${domain}`, raw: signatures + unsigned });
    const [row] = await rowsOf(inbox);
    expect(row.auth.dkim).toEqual([{ result: 'pass', domain: shop, aligned: true }]);
    expect(row.auth.spf.result).toBe('fail');
    expect(row.auth.dmarc.result).toBe('pass');
  });

  it('when the raw message cannot be stored the sender gets 451 (try later) and no row exists: nothing unstored is acknowledged', async () => {
    const inbox = await addInbox(workspaceId, domain, 'outage');
    // A blob store nobody listens at: the upload fails at once.
    const deadStore = createBlobStore({ bucket: 'nowhere', region: 'us-east-1', endpoint: 'http://127.0.0.1:1', createBucket: false, limits: { connectMs: 500, maxAttempts: 1 } });
    const failing = createInboundSmtpServer({
      db, blobs: deadStore, resolver: dns.resolver, mxHost: 'inbound.messaging.local', limits: limits(),
      logger: pino({ level: 'silent' }), handOff: async () => undefined, closeTimeoutMs: 200,
    });
    const livePort = port;
    port = await listenInboundSmtp(failing, '127.0.0.1', 0);
    try {
      const error = await send({ from: 'alice@sender.example.net', to: `outage@${domain}`, raw: rawMail('alice@sender.example.net', `outage@${domain}`) }).catch((e: unknown) => e);
      expect(error).toMatchObject({ responseCode: 451 });
      expect(await rowsOf(inbox)).toHaveLength(0);
    } finally {
      port = livePort;
      await closeInboundSmtp(failing);
      deadStore.close();
    }
  });

  it('STARTTLS is offered with a certificate, and mail delivered over it is accepted', async () => {
    const inbox = await addInbox(workspaceId, domain, 'secure');
    const info = await send({ from: 'alice@sender.example.net', to: `secure@${domain}`, raw: rawMail('alice@sender.example.net', `secure@${domain}`) }, { requireTLS: true });
    expect(info.accepted).toHaveLength(1);
    expect(await rowsOf(inbox)).toHaveLength(1);
  });

  it('past the connection cap a new connection is answered 421 (try later) while the held one keeps its session', async () => {
    const capped = createInboundSmtpServer({
      db, blobs, resolver: dns.resolver, mxHost: 'inbound.messaging.local', limits: limits({ maxConnections: 1 }),
      logger: pino({ level: 'silent' }), handOff: async () => undefined, closeTimeoutMs: 200,
    });
    const cappedPort = await listenInboundSmtp(capped, '127.0.0.1', 0);
    const greeting = (socket: Socket) => new Promise<string>((resolve) => socket.once('data', (data: Buffer) => resolve(data.toString())));
    const first = connect(cappedPort, '127.0.0.1');
    let second: Socket | undefined;
    try {
      expect(await greeting(first)).toMatch(/^220 /);
      second = connect(cappedPort, '127.0.0.1');
      expect(await greeting(second)).toMatch(/^421 /);
    } finally {
      first.destroy();
      second?.destroy();
      await closeInboundSmtp(capped);
    }
  });

  /** A raw SMTP dialogue: each command's reply, for what a mail library will not send (SIZE=, pipelined RCPTs). */
  async function dialogue(commands: string[]): Promise<string[]> {
    const socket = connect(port, '127.0.0.1');
    const replies: string[] = [];
    let buffered = '';
    const next = () => new Promise<string>((resolve) => {
      const take = () => {
        // A reply is complete at a line whose code is followed by a space (RFC 5321 §4.2.1).
        const end = buffered.search(/^\d{3} [^\r\n]*\r\n/m);
        if (end < 0) return false;
        const close = buffered.indexOf('\r\n', end) + 2;
        resolve(buffered.slice(0, close));
        buffered = buffered.slice(close);
        return true;
      };
      if (take()) return;
      const onData = (data: Buffer) => {
        buffered += data.toString();
        if (take()) socket.off('data', onData);
      };
      socket.on('data', onData);
    });
    try {
      await next();
      for (const command of commands) {
        socket.write(`${command}\r\n`);
        replies.push(await next());
      }
    } finally {
      socket.destroy();
    }
    return replies;
  }

  it('a MAIL FROM that declares a SIZE past the limit is refused with 552 before any body is sent', async () => {
    const [, mailFrom] = await dialogue(['EHLO sender.example.net', `MAIL FROM:<alice@sender.example.net> SIZE=${MAX_BYTES + 1}`]);
    expect(mailFrom).toMatch(/^552 /);
  });

  it('past 100 accepted recipients in one transaction the next is answered 452 (send the rest later)', async () => {
    const ids = Array.from({ length: 101 }, (_, i) => `many${i}`);
    for (const localPart of ids) await addInbox(workspaceId, domain, localPart);
    const replies = await dialogue(['EHLO sender.example.net', 'MAIL FROM:<alice@sender.example.net>', ...ids.map((localPart) => `RCPT TO:<${localPart}@${domain}>`)]);
    const rcpts = replies.slice(2);
    expect(rcpts.slice(0, 100).every((line) => line.startsWith('250 '))).toBe(true);
    expect(rcpts[100]).toMatch(/^452 /);
  });

  it('one message to inboxes of two workspaces is stored as two copies, each under its own workspace', async () => {
    const { workspaceId: other } = await createTestWorkspace(db);
    const otherDomain = await inboundDomain(other);
    const otherInbox = await addInbox(other, otherDomain, 'desk');
    const ours = await addInbox(workspaceId, domain, 'shared');
    const raw = rawMail('alice@sender.example.net', `shared@${domain}, desk@${otherDomain}`);
    const info = await send({ from: 'alice@sender.example.net', to: [`shared@${domain}`, `desk@${otherDomain}`], raw });
    expect(info.accepted).toHaveLength(2);
    const [mine] = await rowsOf(ours);
    const [theirs] = await rowsOf(otherInbox);
    expect(mine.raw_blob_key.startsWith(`inbound/${workspaceId}/`)).toBe(true);
    expect(theirs.raw_blob_key.startsWith(`inbound/${other}/`)).toBe(true);
    expect((await blobs.get(theirs.raw_blob_key, MAX_BYTES))?.toString()).toBe(raw);
  });
});
