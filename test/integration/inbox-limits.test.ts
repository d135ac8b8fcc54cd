import { randomUUID } from 'node:crypto';
import { mkdtemp, readdir, rm, stat } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import nodemailer from 'nodemailer';
import { pino } from 'pino';
import { QueryTypes, type Sequelize } from 'sequelize';
import type { SMTPServer } from 'smtp-server';
import { loadConfig } from '../../core/config';
import { type BlobStore, blobStoreOptions, createBlobStore } from '../../db/blob-store';
import { findDomainByName, setInboundEnabled } from '../../db/repositories/domains';
import { inboundStorageUsed } from '../../db/repositories/inbox-storage';
import { createSequelize } from '../../db/sequelize';
import { inboundLimits, type InboundLimits } from '../../workers/inbox/limits';
import { listenForRecipientChanges, RecipientDirectory } from '../../workers/inbox/recipients';
import { closeInboundSmtp, createInboundSmtpServer, listenInboundSmtp } from '../../workers/inbox/smtp-server';
import { startApi } from '../helpers/api-harness';
import { startDnsServer, type TestDnsServer } from '../helpers/dns-server';
import { createTestWorkspace } from '../helpers/workspaces';
import { eventually, openSmtpSession } from '../helpers/smtp-session';

/**
 * What one sender or one workspace can take from the inbound listener, over real SMTP sessions (nodemailer
 * and raw sockets) against real Postgres, S3 and DNS: bytes in flight, per-address rates, MIME structure,
 * storage quota, and the recipient cache with its invalidation.
 */
describe('the inbound listener under load and abuse', () => {
  const config = loadConfig(process.env);
  const logger = pino({ level: 'silent' });
  let db: Sequelize;
  let blobs: BlobStore;
  let dns: TestDnsServer;
  const servers: SMTPServer[] = [];
  const spoolDirs: string[] = [];

  async function inboundWorkspace(): Promise<{ workspaceId: string; apiKey: string; domain: string; inbox: (localPart: string) => Promise<string> }> {
    const { workspaceId, apiKey, domain } = await createTestWorkspace(db, { domain: true });
    const found = await findDomainByName(db, workspaceId, domain);
    await setInboundEnabled(db, workspaceId, found!.id, true);
    const inbox = async (localPart: string) => {
      const id = randomUUID();
      await db.query('INSERT INTO inboxes (id, workspace_id, domain_id, local_part) VALUES ($1, $2, $3, $4)', { bind: [id, workspaceId, found!.id, localPart] });
      return id;
    };
    return { workspaceId, apiKey, domain, inbox };
  }

  /** A listener with the configured limits, narrowed to what the test is about, spooling to a directory of its own. */
  async function listener(overrides: Partial<InboundLimits> = {}, recipients?: RecipientDirectory) {
    const spoolDir = await mkdtemp(join(tmpdir(), 'inbound-spool-'));
    spoolDirs.push(spoolDir);
    const limits = { ...inboundLimits(config), maxMessageBytes: 1024 * 1024, spoolDir, ...overrides };
    const server = createInboundSmtpServer({ db, blobs, resolver: dns.resolver, mxHost: 'inbound.messaging.local', limits, recipients, logger, handOff: async () => undefined, closeTimeoutMs: 200 });
    servers.push(server);
    return { port: await listenInboundSmtp(server, '127.0.0.1', 0), spoolDir };
  }

  function send(port: number, to: string, raw: string) {
    const transport = nodemailer.createTransport({ host: '127.0.0.1', port, secure: false, ignoreTLS: true, name: 'sender.example.net' });
    return transport.sendMail({ envelope: { from: 'alice@sender.example.net', to }, raw }).finally(() => transport.close());
  }
  const refusal = (port: number, to: string, raw: string) => send(port, to, raw).then(() => null, (error: unknown) => error as { responseCode: number; message: string; command: string });

  const mail = (to: string, body = 'Hi there', extraHeaders = '') =>
    `From: alice@sender.example.net\r\nTo: ${to}\r\nSubject: Hello\r\nMessage-ID: <${randomUUID()}@sender.example.net>\r\n${extraHeaders}MIME-Version: 1.0\r\nContent-Type: text/plain\r\n\r\n${body}\r\n`;

  function multipart(to: string, parts: Array<{ attachment: boolean }>): string {
    const boundary = `b-${randomUUID()}`;
    const body = parts.map((part, index) => part.attachment
      ? `--${boundary}\r\nContent-Type: application/octet-stream\r\nContent-Disposition: attachment; filename="file-${index}.bin"\r\nContent-Transfer-Encoding: base64\r\n\r\nAAAA\r\n`
      : `--${boundary}\r\nContent-Type: text/plain\r\n\r\npart ${index}\r\n`).join('');
    return mail(to, '', '').replace('Content-Type: text/plain\r\n\r\n\r\n', `Content-Type: multipart/mixed; boundary="${boundary}"\r\n\r\n${body}--${boundary}--\r\n`);
  }

  const rowsOf = (inboxId: string) =>
    db.query<{ id: string; raw_size: number }>('SELECT id, raw_size FROM inbox_messages WHERE inbox_id = $1', { bind: [inboxId], type: QueryTypes.SELECT });

  beforeAll(async () => {
    db = createSequelize(config.DATABASE_URL);
    blobs = createBlobStore(blobStoreOptions(config));
    dns = await startDnsServer();
  });

  afterAll(async () => {
    await Promise.all(servers.map((server) => closeInboundSmtp(server)));
    await Promise.all(spoolDirs.map((dir) => rm(dir, { recursive: true, force: true })));
    await dns.close();
    blobs.close();
    await db.close();
  });

  it('while one session holds most of the bytes-in-flight budget mid-DATA, another message is answered 452 4.3.1; once it is stored the next gets through, and the spool is left empty', async () => {
    const { domain, inbox } = await inboundWorkspace();
    const inboxId = await inbox('desk');
    const { port, spoolDir } = await listener({ maxBytesInFlight: 100_000 });

    const holder = await openSmtpSession(port);
    await holder.command('EHLO sender.example.net');
    await holder.command('MAIL FROM:<alice@sender.example.net>');
    await holder.command(`RCPT TO:<desk@${domain}>`);
    expect(await holder.command('DATA')).toMatch(/^354 /);
    await holder.write(mail(`desk@${domain}`, 'x'.repeat(70_000)));
    // The bytes are on disk (the spool), not in the process: wait until they are all there.
    await eventually(async () => {
      const [file] = await readdir(spoolDir);
      expect((await stat(join(spoolDir, file))).size).toBeGreaterThan(70_000);
    });

    const squeezed = await refusal(port, `desk@${domain}`, mail(`desk@${domain}`, 'y'.repeat(40_000)));
    expect(squeezed).toMatchObject({ responseCode: 452 });
    expect(squeezed?.message).toMatch(/4\.3\.1/);

    expect(await holder.endData()).toMatch(/^250 /);
    holder.close();
    expect(await refusal(port, `desk@${domain}`, mail(`desk@${domain}`, 'y'.repeat(40_000)))).toBeNull();
    expect(await rowsOf(inboxId)).toHaveLength(2);
    expect(await readdir(spoolDir)).toEqual([]);
  });

  it('a MAIL FROM declaring a SIZE the bytes-in-flight budget cannot take is answered 452 before any body is sent', async () => {
    const { port } = await listener({ maxBytesInFlight: 100_000 });
    const session = await openSmtpSession(port);
    await session.command('EHLO sender.example.net');
    expect(await session.command('MAIL FROM:<alice@sender.example.net> SIZE=200000')).toMatch(/^452 4\.3\.1/);
    expect(await session.command('MAIL FROM:<alice@sender.example.net> SIZE=2000')).toMatch(/^250 /);
    session.close();
  });

  it('a message that declared its SIZE keeps its share of the budget: one started after it runs out instead (452), and it is stored whole', async () => {
    const { domain, inbox } = await inboundWorkspace();
    const inboxId = await inbox('big');
    const { port, spoolDir } = await listener({ maxBytesInFlight: 100_000 });
    const body = mail(`big@${domain}`, 'x'.repeat(68_000));

    const declared = await openSmtpSession(port);
    await declared.command('EHLO sender.example.net');
    await declared.command(`MAIL FROM:<alice@sender.example.net> SIZE=${Buffer.byteLength(body) + 5}`);
    await declared.command(`RCPT TO:<big@${domain}>`);
    expect(await declared.command('DATA')).toMatch(/^354 /);
    await declared.write(body.slice(0, 10_000));

    const later = await openSmtpSession(port);
    await later.command('EHLO sender.example.net');
    await later.command('MAIL FROM:<bob@sender.example.net>');
    await later.command(`RCPT TO:<big@${domain}>`);
    await later.command('DATA');
    await later.write(mail(`big@${domain}`, 'y'.repeat(50_000)));
    expect(await later.endData()).toMatch(/^452 4\.3\.1/);
    later.close();

    await declared.write(body.slice(10_000));
    expect(await declared.endData()).toMatch(/^250 /);
    declared.close();
    expect(await rowsOf(inboxId)).toHaveLength(1);
    expect(await readdir(spoolDir)).toEqual([]);
  });

  it('a spool that cannot be written answers 451 (try later) at the end of DATA, and the session goes on to its next command', async () => {
    const { domain, inbox } = await inboundWorkspace();
    await inbox('desk');
    const { port } = await listener({ spoolDir: join(tmpdir(), `inbound-missing-${randomUUID()}`) });
    const sender = await openSmtpSession(port);
    await sender.command('EHLO sender.example.net');
    await sender.command('MAIL FROM:<alice@sender.example.net>');
    expect(await sender.command(`RCPT TO:<desk@${domain}>`)).toMatch(/^250 /);
    expect(await sender.command('DATA')).toMatch(/^354 /);
    await sender.write(mail(`desk@${domain}`, 'line\r\n'.repeat(20_000)));
    expect(await sender.endData()).toMatch(/^451 /);
    expect(await sender.command('NOOP')).toMatch(/^250 /);
    sender.close();
  });

  it('past the connections one address may hold, its next connection is answered 421; when one closes it gets in again', async () => {
    const { port } = await listener({ connectionsPerIp: 2 });
    const first = await openSmtpSession(port);
    const second = await openSmtpSession(port);
    expect([first.greeting, second.greeting]).toEqual([expect.stringMatching(/^220 /), expect.stringMatching(/^220 /)]);
    const third = await openSmtpSession(port);
    expect(third.greeting).toMatch(/^421 4\.7\.0 Too many connections/);
    first.close();
    await eventually(async () => {
      const again = await openSmtpSession(port);
      again.close();
      expect(again.greeting).toMatch(/^220 /);
    });
    second.close();
  });

  it('past the new connections one address may open per minute, the next is answered 421 with when to come back', async () => {
    const { port } = await listener({ connectionsPerIpPerMinute: 3 });
    for (let index = 0; index < 3; index += 1) {
      const session = await openSmtpSession(port);
      session.close();
      expect(session.greeting).toMatch(/^220 /);
    }
    const refused = await openSmtpSession(port);
    expect(refused.greeting).toMatch(/^421 4\.7\.0 Too many connections from your address, try again in \d+ s/);
  });

  it('past the messages one address may start per minute, MAIL FROM is answered 450 4.7.1 (its queue retries later)', async () => {
    const { port } = await listener({ messagesPerIpPerMinute: 2 });
    const session = await openSmtpSession(port);
    await session.command('EHLO sender.example.net');
    expect(await session.command('MAIL FROM:<a@sender.example.net>')).toMatch(/^250 /);
    await session.command('RSET');
    expect(await session.command('MAIL FROM:<a@sender.example.net>')).toMatch(/^250 /);
    await session.command('RSET');
    expect(await session.command('MAIL FROM:<a@sender.example.net>')).toMatch(/^450 4\.7\.1 Too many messages/);
    session.close();
  });

  it('a message past the MIME part cap, or past the attachment cap, is refused 552 5.3.4 at the end of DATA and nothing is stored; one within both is stored', async () => {
    const { domain, inbox } = await inboundWorkspace();
    const inboxId = await inbox('files');
    const { port, spoolDir } = await listener({ maxMimeParts: 10, maxAttachments: 3 });
    const to = `files@${domain}`;

    const parts = await refusal(port, to, multipart(to, Array.from({ length: 12 }, () => ({ attachment: false }))));
    expect(parts).toMatchObject({ responseCode: 552, command: 'DATA' });
    expect(parts?.message).toMatch(/5\.3\.4 Message has more than 10 MIME parts/);
    const files = await refusal(port, to, multipart(to, Array.from({ length: 4 }, () => ({ attachment: true }))));
    expect(files).toMatchObject({ responseCode: 552, command: 'DATA' });
    expect(files?.message).toMatch(/5\.3\.4 Message has more than 3 attachments/);
    expect(await rowsOf(inboxId)).toHaveLength(0);

    expect(await refusal(port, to, multipart(to, [{ attachment: false }, { attachment: true }, { attachment: true }, { attachment: true }]))).toBeNull();
    expect(await rowsOf(inboxId)).toHaveLength(1);
    expect(await readdir(spoolDir)).toEqual([]);
  });

  it('a workspace at its storage quota is answered 452 4.2.2 (at RCPT when full, after DATA when the message would not fit, 552 5.2.2 when larger than the quota) while another workspace still takes mail', async () => {
    const full = await inboundWorkspace();
    const fullInbox = await full.inbox('archive');
    const other = await inboundWorkspace();
    const otherInbox = await other.inbox('desk');
    const { port } = await listener({ storageQuotaBytes: 3_000 });
    const to = `archive@${full.domain}`;

    expect(await refusal(port, to, mail(to, 'a'.repeat(1_500)))).toBeNull();
    const wouldCross = await refusal(port, to, mail(to, 'b'.repeat(1_500)));
    expect(wouldCross).toMatchObject({ responseCode: 452, command: 'DATA' });
    expect(wouldCross?.message).toMatch(/4\.2\.2 Mailbox full/);
    const tooLarge = await refusal(port, to, mail(to, 'c'.repeat(3_500)));
    expect(tooLarge).toMatchObject({ responseCode: 552 });
    expect(tooLarge?.message).toMatch(/5\.2\.2/);
    expect(await refusal(port, to, mail(to, 'd'.repeat(1_000)))).toBeNull();
    const used = await inboundStorageUsed(db, full.workspaceId);
    expect(used.messages).toBe(2);
    expect(used.bytes).toBe((await rowsOf(fullInbox)).reduce((sum, row) => sum + row.raw_size, 0));

    // Declared up front, the refusal comes at RCPT, before the body travels.
    const session = await openSmtpSession(port);
    await session.command('EHLO sender.example.net');
    await session.command(`MAIL FROM:<alice@sender.example.net> SIZE=${3_000 - used.bytes + 1}`);
    expect(await session.command(`RCPT TO:<${to}>`)).toMatch(/^452 4\.2\.2/);
    expect(await session.command(`RCPT TO:<desk@${other.domain}>`)).toMatch(/^250 /);
    session.close();
    expect(await refusal(port, `desk@${other.domain}`, mail(`desk@${other.domain}`))).toBeNull();
    expect(await rowsOf(otherInbox)).toHaveLength(1);
  });

  it('GET /usage shows the received mail held against the storage quota, and deleting an inbox gives its mail\'s bytes back', async () => {
    const { workspaceId, apiKey, domain, inbox } = await inboundWorkspace();
    await inbox('keep');
    const dropped = await inbox('drop');
    const { port } = await listener();
    await send(port, `keep@${domain}`, mail(`keep@${domain}`));
    await send(port, `drop@${domain}`, mail(`drop@${domain}`, 'z'.repeat(5_000)));
    const held = await inboundStorageUsed(db, workspaceId);
    expect(held.messages).toBe(2);

    const api = await startApi();
    try {
      const before = await api.call('GET', '/api/v1/usage', { key: apiKey });
      expect(before.status).toBe(200);
      expect((before.body as { inboundStorage: unknown }).inboundStorage).toEqual({
        limit: config.INBOUND_STORAGE_QUOTA_BYTES, used: held.bytes, remaining: config.INBOUND_STORAGE_QUOTA_BYTES - held.bytes, messages: 2,
      });
      expect((await api.call('DELETE', `/api/v1/inboxes/${dropped}`, { key: apiKey })).status).toBeLessThan(300);
      const after = await api.call('GET', '/api/v1/usage', { key: apiKey });
      expect((after.body as { inboundStorage: { used: number; messages: number } }).inboundStorage).toMatchObject({ messages: 1 });
      expect((after.body as { inboundStorage: { used: number } }).inboundStorage.used).toBeLessThan(held.bytes - 5_000);
    } finally {
      await api.close();
    }
  });

  describe('the recipient cache', () => {
    let counted: Sequelize;
    let queries = 0;
    let recipients: RecipientDirectory;
    let changes: { close: () => Promise<void> };

    beforeAll(async () => {
      counted = createSequelize(config.DATABASE_URL);
      counted.addHook('beforeQuery', () => {
        queries += 1;
      });
      // An hour: anything seen changing within the test was told, not expired.
      recipients = new RecipientDirectory(counted, 3_600_000);
      changes = listenForRecipientChanges(config.DATABASE_URL, recipients, logger);
      await eventually(async () => expect(recipients.subscribed).toBe(true));
    });

    afterAll(async () => {
      await changes.close();
      await counted.close();
    });

    async function rcpt(port: number, address: string): Promise<string> {
      const session = await openSmtpSession(port);
      try {
        await session.command('EHLO sender.example.net');
        await session.command('MAIL FROM:<alice@sender.example.net>');
        return await session.command(`RCPT TO:<${address}>`);
      } finally {
        session.close();
      }
    }

    it('a repeated RCPT (an inbox, an unknown mailbox, a foreign domain) is answered without reading PostgreSQL', async () => {
      const { domain, inbox } = await inboundWorkspace();
      await inbox('sales');
      const { port } = await listener({ connectionsPerIpPerMinute: 1_000_000, messagesPerIpPerMinute: 1_000_000 }, recipients);
      const addresses = [`sales@${domain}`, `nobody@${domain}`, 'someone@elsewhere.example.org'];
      const first = await Promise.all(addresses.map((address) => rcpt(port, address)));
      const before = queries;
      expect(await Promise.all(addresses.map((address) => rcpt(port, address)))).toEqual(first);
      expect(queries).toBe(before);
      expect(first.map((line) => line.slice(0, 3))).toEqual(['250', '550', '550']);
    });

    it('an inbox created, disabled or deleted, a rule added and inbound turned off are seen at the next RCPT, not after the cache expires', async () => {
      const { workspaceId, domain, inbox } = await inboundWorkspace();
      const { port } = await listener({ connectionsPerIpPerMinute: 1_000_000, messagesPerIpPerMinute: 1_000_000 }, recipients);
      expect(await rcpt(port, `late@${domain}`)).toMatch(/^550 5\.1\.1/);

      const late = await inbox('late');
      await eventually(async () => expect(await rcpt(port, `late@${domain}`)).toMatch(/^250 /));
      await db.query("UPDATE inboxes SET status = 'disabled' WHERE id = $1", { bind: [late] });
      await eventually(async () => expect(await rcpt(port, `late@${domain}`)).toMatch(/^550 5\.1\.1/));

      const kept = await inbox('kept');
      await eventually(async () => expect(await rcpt(port, `kept@${domain}`)).toMatch(/^250 /));
      await db.query("INSERT INTO email_rules (id, workspace_id, action, match_type, value) VALUES ($1, $2, 'block', 'domain', 'sender.example.net')", {
        bind: [randomUUID(), workspaceId],
      });
      await eventually(async () => expect(await rcpt(port, `kept@${domain}`)).toMatch(/^550 5\.7\.1 Sender blocked/));
      await db.query('DELETE FROM email_rules WHERE workspace_id = $1', { bind: [workspaceId] });
      await eventually(async () => expect(await rcpt(port, `kept@${domain}`)).toMatch(/^250 /));

      await db.query('DELETE FROM inboxes WHERE id = $1', { bind: [kept] });
      await eventually(async () => expect(await rcpt(port, `kept@${domain}`)).toMatch(/^550 5\.1\.1/));
      await db.query('UPDATE domains SET inbound_enabled = false WHERE name = $1', { bind: [domain] });
      await eventually(async () => expect(await rcpt(port, `kept@${domain}`)).toMatch(/^550 5\.7\.1 Relaying denied/));
    });
  });
});
