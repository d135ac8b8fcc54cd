import { generateKeyPairSync, randomUUID } from 'node:crypto';
import type { Client, WorkflowHandle } from '@temporalio/client';
import { connectTemporal } from '../../temporal/connection';
import nodemailer from 'nodemailer';
import type Mail from 'nodemailer/lib/mailer';
import { pino } from 'pino';
import { QueryTypes } from 'sequelize';
import type { SMTPServer } from 'smtp-server';
import { createInboundMailActivities } from '../../activities/inbox-mail';
import { inboundMailWorkflowId } from '../../core/ids';
import { type BlobStore, blobStoreOptions, createBlobStore } from '../../db/blob-store';
import { findDomainByName, setInboundEnabled } from '../../db/repositories/domains';
import { runInboundDispatcher } from '../../workers/inbox/dispatcher';
import { closeInboundSmtp } from '../../workers/inbox/smtp-server';
import { startDnsServer, type TestDnsServer } from '../helpers/dns-server';
import { type EmailStack, startEmailStack } from '../helpers/email-stack';
import { createTestKey, createTestWorkspace } from '../helpers/workspaces';
import { startInboundListener } from '../helpers/inbox-listener';
import { startWebhookReceiver, type WebhookReceiver } from '../helpers/webhook-receiver';
import { until } from '../helpers/polling';
import { temporalPorts } from '../../temporal/activity-ports';

jest.setTimeout(120_000);

interface InboxMessageRow {
  id: string;
  status: string;
  thread_id: string | null;
  contact_id: string | null;
  from_address: string | null;
  to_addresses: string[];
  subject: string | null;
  text: string | null;
  reply_text: string | null;
  attachments: Array<{ filename: string; contentType: string; size: number; blobKey: string }>;
  malformed: boolean;
  parse_defects: string[];
  workflow_started_at: Date | null;
  auth: { dmarc: { result: string }; sender: { authenticated: boolean; by: string | null; reason: string | null; threadedBy: string } };
}

interface ThreadRow {
  id: string;
  folder: string;
  message_count: number;
  unread_count: number;
  participants: string[];
  subject: string;
}

// Real SMTP sessions (nodemailer as the sending server) to the inbound listener, whose hand-off starts the
// inbound-mail workflow on the shipped workers under the Temporal dev server, with real Postgres and S3.
let stack: EmailStack;
let client: Client;
let dns: TestDnsServer;
let receiver: WebhookReceiver;
let blobs: BlobStore;
let server: SMTPServer;
let port: number;
/** What the listener's hand-off does: start the workflows (as shipped), or fail as when Temporal is away. */
let handOff: 'start' | 'fail' = 'start';

beforeAll(async () => {
  dns = await startDnsServer();
  receiver = await startWebhookReceiver();
  stack = await startEmailStack({ overrides: { RATE_LIMIT_PER_SECOND: '1000', WEBHOOKS_ALLOW_PRIVATE_TARGETS: 'true' } });
  client = await connectTemporal(stack.api.config);
  blobs = createBlobStore(blobStoreOptions(stack.api.config));
  ({ server, port } = await startInboundListener({
    stack, client, dns, blobs,
    handOff: async (_accepted, start) => {
      if (handOff === 'fail') throw new Error('Temporal unreachable');
      await start();
    },
  }));
});

afterAll(async () => {
  await closeInboundSmtp(server);
  blobs.close();
  await client.connection.close();
  await stack.close();
  await receiver.close();
  await dns.close();
});

const query = <T extends object>(sql: string, bind: unknown[]) => stack.api.db.query<T>(sql, { bind, type: QueryTypes.SELECT });

/** A workspace with an inbound-enabled verified domain and an inbox on it. */
async function inboxOfNewWorkspace(localPart = 'support') {
  const { workspaceId, apiKey, domain } = await createTestWorkspace(stack.api, { domain: true });
  const found = await findDomainByName(stack.api.db, workspaceId, domain);
  await setInboundEnabled(stack.api.db, workspaceId, found!.id, true);
  const inboxId = randomUUID();
  await stack.api.db.query('INSERT INTO inboxes (id, workspace_id, domain_id, local_part, display_name) VALUES ($1, $2, $3, $4, $5)', {
    bind: [inboxId, workspaceId, found!.id, localPart, 'Support team'],
  });
  return { workspaceId, apiKey, domain, inboxId, address: `${localPart}@${domain}` };
}

type DkimKey = { domainName: string; keySelector: string; privateKey: string };

function send(message: Mail.Options & { envelope?: { from: string; to: string } }, dkim?: DkimKey) {
  const transport = nodemailer.createTransport({ host: '127.0.0.1', port, secure: false, ignoreTLS: true, name: 'sender.example.net', dkim });
  return transport.sendMail(message).finally(() => transport.close());
}

/**
 * A sender domain of its own in the test DNS, with no DMARC record, whose mail from this machine is
 * authenticated one way: `dkim`, a published key the sender signs with, and SPF that does not list this machine
 * (so an unsigned message from here fails SPF: a spoof); `spf`, SPF listing this machine.
 */
function senderDomain(how: 'dkim' | 'spf') {
  const domain = `sender-${randomUUID().slice(0, 8)}.test`;
  if (how === 'spf') {
    dns.setTxt(domain, 'v=spf1 ip4:127.0.0.1 -all');
    return { domain, key: undefined };
  }
  const { publicKey, privateKey } = generateKeyPairSync('rsa', { modulusLength: 2048 });
  dns.setTxt(`mail._domainkey.${domain}`, `v=DKIM1; k=rsa; p=${publicKey.export({ type: 'spki', format: 'der' }).toString('base64')}`);
  dns.setTxt(domain, 'v=spf1 ip4:192.0.2.1 -all');
  const key: DkimKey = { domainName: domain, keySelector: 'mail', privateKey: privateKey.export({ type: 'pkcs8', format: 'pem' }).toString() };
  return { domain, key };
}

const messagesOf = (inboxId: string) =>
  query<InboxMessageRow>("SELECT * FROM inbox_messages WHERE inbox_id = $1 AND direction = 'in' ORDER BY created_at", [inboxId]);
const threadsOf = (inboxId: string) => query<ThreadRow>('SELECT * FROM threads WHERE inbox_id = $1 ORDER BY created_at', [inboxId]);
const processed = (inboxId: string, count: number) =>
  until(`${count} processed in ${inboxId}`, () => messagesOf(inboxId), (rows) => rows.length === count && rows.every((row) => row.status === 'processed'));

/** Our sent message in a thread filed under `sent`, as the inbox send path writes it. */
async function sentMessage(inbox: { workspaceId: string; inboxId: string; domain: string; address: string }, to: string, subject: string) {
  const threadId = randomUUID();
  const messageIdHeader = `${randomUUID()}@${inbox.domain}`;
  const providerId = `0102019a${randomUUID().replace(/-/g, '').slice(0, 8)}-${randomUUID()}-000000`;
  await stack.api.db.query(
    `INSERT INTO threads (id, workspace_id, inbox_id, subject, normalized_subject, participants, folder, message_count, unread_count, last_message_at)
     VALUES ($1, $2, $3, $4, lower($4), $5::text[], 'sent', 1, 0, now() - interval '1 hour')`,
    { bind: [threadId, inbox.workspaceId, inbox.inboxId, subject, [to]] },
  );
  await stack.api.db.query(
    `INSERT INTO inbox_messages (id, workspace_id, inbox_id, thread_id, direction, status, message_id_header, provider_message_id, from_address, to_addresses, subject)
     VALUES ($1, $2, $3, $4, 'out', 'sent', $5, $6, $7, $8::text[], $9)`,
    { bind: [randomUUID(), inbox.workspaceId, inbox.inboxId, threadId, messageIdHeader, providerId, inbox.address, [to], subject] },
  );
  return { threadId, messageIdHeader, providerId };
}

it('mail to an inbox lands parsed in a new thread, counted once, with its reply text, its attachment in the blob store, and an email.received webhook', async () => {
  const inbox = await inboxOfNewWorkspace();
  const path = `/${randomUUID()}`;
  const created = await stack.api.as(inbox.apiKey)('POST', '/webhooks', { url: `${receiver.url}${path}`, events: ['email.received'] });
  expect(created.status).toBe(201);

  await send({
    from: 'Alice Doe <alice@sender.example.net>',
    to: inbox.address,
    cc: 'bob@sender.example.net',
    subject: 'Invoice question',
    text: 'Thanks, that works for me.\n\nOn Tue, Nov 24, 2026 at 10:00 AM Support <support@x.example> wrote:\n> Does Friday work?\n',
    attachments: [{ filename: 'invoice.pdf', content: Buffer.from('%PDF-1.4 test'), contentType: 'application/pdf' }],
  });

  const [row] = await processed(inbox.inboxId, 1);
  expect(row).toMatchObject({
    from_address: 'alice@sender.example.net',
    to_addresses: [inbox.address],
    subject: 'Invoice question',
    reply_text: 'Thanks, that works for me.',
    malformed: false,
    contact_id: null,
  });
  expect(row.workflow_started_at).not.toBeNull();
  expect(row.attachments).toEqual([expect.objectContaining({ filename: 'invoice.pdf', contentType: 'application/pdf', size: 13 })]);
  expect((await blobs.get(row.attachments[0].blobKey, 1024))?.toString()).toBe('%PDF-1.4 test');

  const [thread] = await threadsOf(inbox.inboxId);
  expect(thread).toMatchObject({ id: row.thread_id, folder: 'inbox', message_count: 1, unread_count: 1, subject: 'Invoice question' });
  expect([...thread.participants].sort()).toEqual(['alice@sender.example.net', 'bob@sender.example.net']);
  expect(await query('SELECT received FROM inbox_daily_counters WHERE inbox_id = $1', [inbox.inboxId])).toEqual([{ received: 1 }]);

  const [request] = await receiver.waitFor(path);
  const body = JSON.parse(request.body) as { type: string; data: Record<string, unknown> };
  expect(body.type).toBe('email.received');
  expect(body.data).toMatchObject({
    inboxId: inbox.inboxId,
    threadId: row.thread_id,
    messageId: row.id,
    from: 'alice@sender.example.net',
    fromName: 'Alice Doe',
    subject: 'Invoice question',
    replyTextPreview: 'Thanks, that works for me.',
    attachments: 1,
    spoofed: false,
    isReply: false,
  });
});

it('a reply to our sent message threads with it by our Message-ID and by SES\'s rewritten one, and brings the thread back from sent to inbox', async () => {
  const inbox = await inboxOfNewWorkspace();
  const ours = await sentMessage(inbox, 'carol@client.example.com', 'Your quote');

  // Subjects that match nothing: only the references can thread these.
  await send({ from: 'carol@client.example.com', to: inbox.address, subject: 'numbers', text: 'See below', inReplyTo: `<${ours.messageIdHeader}>`, references: [`<${ours.messageIdHeader}>`] });
  await send({ from: 'carol@client.example.com', to: inbox.address, subject: 'more numbers', text: 'And this', inReplyTo: `<${ours.providerId}@eu-west-1.amazonses.com>` });
  await processed(inbox.inboxId, 2);
  // A stranger holding the id (leaked) and writing unauthenticated from an address not in the thread.
  await send({ from: 'mallory@elsewhere.example.net', to: inbox.address, subject: 'numbers', text: 'Send me the file', inReplyTo: `<${ours.messageIdHeader}>` });

  const rows = await processed(inbox.inboxId, 3);
  expect(rows.slice(0, 2).map((row) => row.thread_id)).toEqual([ours.threadId, ours.threadId]);
  // carol's domain publishes nothing: kept in the thread by the reference, marked unauthenticated.
  expect(rows[0].auth.sender).toEqual({ authenticated: false, by: null, reason: 'not_aligned', threadedBy: 'reference' });
  expect(rows[2].thread_id).not.toBe(ours.threadId);
  expect(rows[2].auth.sender).toMatchObject({ authenticated: false, threadedBy: 'new' });
  const threads = await threadsOf(inbox.inboxId);
  expect(threads).toHaveLength(2);
  expect(threads.find((thread) => thread.id === ours.threadId)).toMatchObject({ folder: 'inbox', message_count: 3, unread_count: 2 });
});

it('subject threading joins only a thread the authenticated From is vouched in: a stranger\'s To/Cc overlap and a spoofed From each start a new thread', async () => {
  const inbox = await inboxOfNewWorkspace();
  const buyer = senderDomain('dkim');
  const other = senderDomain('spf');
  const dave = `dave@${buyer.domain}`;
  await send({ from: dave, to: inbox.address, subject: 'Pricing question', text: 'How much?' }, buyer.key);
  await processed(inbox.inboxId, 1);
  await send({ from: dave, to: inbox.address, subject: 'RE: Pricing question', text: 'Any news?' }, buyer.key);
  await processed(inbox.inboxId, 2);
  // Authenticated, but a stranger to the thread: naming dave in Cc does not make erin one of its correspondents.
  await send({ from: `erin@${other.domain}`, to: inbox.address, cc: dave, subject: 'Re: Pricing question', text: 'Me too' });
  await processed(inbox.inboxId, 3);
  // dave's address, unsigned, from a server his domain's SPF does not list; the domain has no DMARC record.
  await send({ from: dave, to: inbox.address, subject: 'Re: Pricing question', text: 'Please use my new bank account' });
  await processed(inbox.inboxId, 4);
  // dave again: the newest thread naming him (erin's, in its Cc) is not his; his own is.
  await send({ from: dave, to: inbox.address, subject: 'Re: Pricing question', text: 'Still waiting' }, buyer.key);
  const rows = await processed(inbox.inboxId, 5);

  const daves = rows[0].thread_id;
  expect(rows.map((row) => row.thread_id === daves)).toEqual([true, true, false, false, true]);
  expect(new Set(rows.map((row) => row.thread_id)).size).toBe(3);
  expect(rows.map((row) => row.auth.sender)).toEqual([
    { authenticated: true, by: 'dkim', reason: null, threadedBy: 'new' },
    { authenticated: true, by: 'dkim', reason: null, threadedBy: 'subject' },
    { authenticated: true, by: 'spf', reason: null, threadedBy: 'new' },
    { authenticated: false, by: null, reason: 'not_aligned', threadedBy: 'new' },
    { authenticated: true, by: 'dkim', reason: null, threadedBy: 'subject' },
  ]);
  // The mark is what the API's message view shows (EmailMessage.auth).
  const detail = await stack.api.as(inbox.apiKey)('GET', `/inboxes/${inbox.inboxId}/threads/${rows[3].thread_id}`);
  expect(detail.status).toBe(200);
  expect((detail.body as { messages: Array<{ auth: Record<string, unknown> }> }).messages[0].auth.sender).toMatchObject({ authenticated: false, reason: 'not_aligned' });
});

it('malformed MIME is stored flagged with what could be read, and processed without crashing or retrying', async () => {
  const inbox = await inboxOfNewWorkspace();
  const raw = [
    'From: frank@broken.example.net',
    `To: ${inbox.address}`,
    'Subject: broken',
    'Content-Type: multipart/mixed; boundary="zz"',
    '',
    '--zz',
    'Content-Type: text/plain',
    '',
    'hello from a broken client',
    '--zz',
    'Content-Type: application/pdf; name=cut.pdf',
    'Content-Transfer-Encoding: base64',
    '',
    'JVBERi0',
  ].join('\r\n');
  await send({ envelope: { from: 'frank@broken.example.net', to: inbox.address }, raw });
  await send({ envelope: { from: 'frank@broken.example.net', to: inbox.address }, raw: Buffer.from([0x00, 0xff, 0xfe, 0x0d, 0x0a, 0x41, 0x42]) });

  const rows = await processed(inbox.inboxId, 2);
  expect(rows[0]).toMatchObject({ malformed: true, subject: 'broken', from_address: 'frank@broken.example.net', text: expect.stringContaining('hello from a broken client') });
  expect(rows[0].parse_defects).toContain('multipart_unterminated');
  expect(rows[1]).toMatchObject({ malformed: true, from_address: null });
  expect(rows[1].parse_defects).toEqual(expect.arrayContaining(['no_header_separator', 'no_from']));
  expect(rows.every((row) => row.thread_id !== null)).toBe(true);
  // Each was processed by its first attempt: nothing the sender wrote makes the activity throw.
  for (const row of rows) {
    const handle = client.workflow.getHandle(inboundMailWorkflowId(row.id));
    // The row is stored before the workflow task that records the step's marker completes: wait for the end.
    await handle.result();
    const history = await handle.fetchHistory();
    expect(processingAttempts(history)).toEqual([1]);
  }
});

/**
 * The attempts of processInboundMail in a history: the steps are local activities, each a marker whose `data`
 * the SDK writes as JSON `{ seq, attempt, activity_type, … }`.
 */
function processingAttempts(history: Awaited<ReturnType<WorkflowHandle['fetchHistory']>>): number[] {
  return (history.events ?? []).flatMap((event) => {
    const payload = event.markerRecordedEventAttributes?.details?.data?.payloads?.[0]?.data;
    if (!payload) return [];
    const marker = JSON.parse(Buffer.from(payload).toString()) as { attempt: number; activity_type: string };
    return marker.activity_type === 'processInboundMail' ? [marker.attempt] : [];
  });
}

it('a DMARC-failing spoof of a contact\'s address is processed with spoofed true, and is not taken as the contact\'s mail', async () => {
  const inbox = await inboxOfNewWorkspace();
  const bank = `bank-${randomUUID().slice(0, 8)}.example.org`;
  dns.setTxt(bank, 'v=spf1 ip4:192.0.2.1 -all');
  dns.setTxt(`_dmarc.${bank}`, 'v=DMARC1; p=reject');
  expect((await stack.api.as(inbox.apiKey)('POST', '/contacts', { identities: [{ channel: 'email', address: `security@${bank}` }] })).status).toBe(201);
  await send({ from: `security@${bank}`, to: inbox.address, subject: 'Verify your account', text: 'Click here' });
  const [row] = await processed(inbox.inboxId, 1);
  expect(row.auth.dmarc.result).toBe('fail');
  expect(row.contact_id).toBeNull();
  expect(await query('SELECT id FROM contact_events WHERE workspace_id = $1', [inbox.workspaceId])).toEqual([]);
  const [event] = await query<{ data: Record<string, unknown> }>("SELECT data FROM platform_events WHERE workspace_id = $1 AND type = 'email.received'", [inbox.workspaceId]);
  expect(event.data).toMatchObject({ spoofed: true, auth: expect.objectContaining({ dmarc: 'fail' }) });
});

it('a spoofed reply from a domain without DMARC is kept marked and linked to no one, ending nothing; the contact\'s DKIM-aligned reply stores email.replied, which ends the journey whose goal it is', async () => {
  const inbox = await inboxOfNewWorkspace();
  const graceDomain = senderDomain('dkim');
  const call = stack.api.as(inbox.apiKey);
  const template = await call('POST', '/templates', { name: 'Follow-up', format: 'html', subject: 'Follow-up', body: '<p>Hi</p>' });
  const automation = await call('POST', '/automations', {
    name: 'Until they answer',
    trigger: { event: 'quote_sent', match: {} },
    goal: { event: 'email.replied', match: {} },
    graph: {
      entry: 'hold',
      nodes: [
        { id: 'hold', type: 'wait', duration: 'P7D', next: 'follow' },
        { id: 'follow', type: 'message', preferredChannel: 'email', templateByChannel: { email: (template.body as { id: string }).id }, from: inbox.address, next: null },
      ],
    },
  });
  expect(automation.status).toBe(201);
  const automationId = (automation.body as { id: string }).id;
  expect((await call('POST', `/automations/${automationId}/activate`)).status).toBe(200);
  const contact = await call('POST', '/contacts', { identities: [{ channel: 'email', address: `Grace@${graceDomain.domain.toUpperCase()}`, consent: 'opted_in' }] });
  const contactId = (contact.body as { id: string }).id;
  expect((await call('POST', '/events', { event: 'quote_sent', contactId })).status).toBe(202);
  const enrollments = async () => (await call('GET', `/automations/${automationId}/enrollments`)).body as { data: Array<Record<string, string>> };
  await until('the contact waiting', enrollments, (page) => page.data.length === 1 && page.data[0].currentNodeId === 'hold');

  const grace = `grace@${graceDomain.domain}`;
  const ours = await sentMessage(inbox, grace, 'Your quote');

  await send({ from: `Grace <${grace}>`, to: inbox.address, subject: 'Re: Your quote', text: 'Cancel it.', inReplyTo: `<${ours.messageIdHeader}>` });
  const [spoof] = await processed(inbox.inboxId, 1);
  await client.workflow.getHandle(inboundMailWorkflowId(spoof.id)).result();
  // In the thread (the From it claims is in it, and a reply goes there), but marked and nobody's word.
  expect(spoof).toMatchObject({ thread_id: ours.threadId, contact_id: null });
  expect(spoof.auth.dmarc.result).toBe('none');
  expect(spoof.auth.sender).toEqual({ authenticated: false, by: null, reason: 'not_aligned', threadedBy: 'reference' });
  expect(await query('SELECT id FROM contact_events WHERE workspace_id = $1 AND name LIKE $2', [inbox.workspaceId, 'email.%'])).toEqual([]);
  const [received] = await query<{ data: Record<string, unknown> }>("SELECT data FROM platform_events WHERE workspace_id = $1 AND type = 'email.received'", [inbox.workspaceId]);
  expect(received.data).toMatchObject({ contactId: null, authenticated: false, spoofed: false });
  expect((await enrollments()).data[0]).toMatchObject({ status: 'active', currentNodeId: 'hold' });

  await send({ from: `Grace <${grace}>`, to: inbox.address, subject: 'Re: Your quote', text: 'Yes, let us go ahead.', inReplyTo: `<${ours.messageIdHeader}>` }, graceDomain.key);
  const [, row] = await processed(inbox.inboxId, 2);
  expect(row.contact_id).toBe(contactId);
  expect(row.auth.sender).toEqual({ authenticated: true, by: 'dkim', reason: null, threadedBy: 'reference' });

  const ended = await until('the journey ended', enrollments, (page) => page.data[0].status !== 'active');
  expect(ended.data[0]).toMatchObject({ status: 'exited', exitReason: 'goal_reached' });
  expect(await query('SELECT name, idempotency_key FROM contact_events WHERE workspace_id = $1 AND contact_id = $2 AND name LIKE $3', [inbox.workspaceId, contactId, 'email.%']))
    // Keyed by the mail (its Message-ID) and the contact, so another inbox's copy of the same mail finds it.
    .toEqual([{ name: 'email.replied', idempotency_key: expect.stringMatching(new RegExp(`^inbound-mail:${contactId}:id:.+@`)) }]);

  const journey = (await call('GET', `/contacts/${contactId}/journey`)).body as { data: Array<Record<string, unknown>> };
  expect(journey.data).toContainEqual(expect.objectContaining({
    type: 'email_received',
    subject: 'Re: Your quote',
    to: { address: inbox.address, displayName: 'Support team', domainKind: 'custom' },
    threadId: ours.threadId,
  }));
  // The mail is its email_received entry: the contact event it made for journeys is not repeated as a touch.
  expect(journey.data.filter((entry) => entry.type === 'touch' && entry.name === 'email.replied')).toEqual([]);
});

it('a first mail from a known contact, SPF-aligned (no message of ours in its thread), stores email.received, not email.replied', async () => {
  const inbox = await inboxOfNewWorkspace();
  const call = stack.api.as(inbox.apiKey);
  const heidi = `heidi@${senderDomain('spf').domain}`;
  const contact = await call('POST', '/contacts', { identities: [{ channel: 'email', address: heidi }] });
  await send({ from: heidi, to: inbox.address, subject: 'Hello', text: 'First time writing' });
  const [row] = await processed(inbox.inboxId, 1);
  expect(row.contact_id).toBe((contact.body as { id: string }).id);
  expect(await query('SELECT name FROM contact_events WHERE workspace_id = $1', [inbox.workspaceId])).toEqual([{ name: 'email.received' }]);
});

it('received HTML is answered sanitized (no script, handler or remote pixel); ?html=raw answers it as received, with the same inbox:read scope', async () => {
  const inbox = await inboxOfNewWorkspace();
  const html = '<p onclick="steal()">Hello <b>there</b></p><script>alert(document.cookie)</script>'
    + '<img src="https://tracker.example/open.gif" width="1" height="1"><a href="javascript:alert(1)">click</a>';
  await send({ from: 'judy@sender.example.net', to: inbox.address, subject: 'Rich mail', html, text: 'Hello there' });
  const [row] = await processed(inbox.inboxId, 1);

  const reader = await createTestKey(stack.api, inbox.workspaceId, ['inbox:read']);
  const path = `/inboxes/${inbox.inboxId}/threads/${row.thread_id}`;
  const shown = await reader.call('GET', path);
  expect(shown.status).toBe(200);
  const [message] = (shown.body as { messages: Array<{ html: string }> }).messages;
  expect(message.html).toContain('<p>Hello <b>there</b></p>');
  expect(message.html).toContain('data-blocked-src="https://tracker.example/open.gif"');
  for (const unsafe of ['<script', 'onclick', 'javascript:', ' src="https://tracker.example']) expect(message.html).not.toContain(unsafe);

  const raw = await reader.call('GET', `${path}?html=raw`);
  expect((raw.body as { messages: Array<{ html: string }> }).messages[0].html).toContain('<script>alert(document.cookie)</script>');
  expect(await reader.call('GET', `${path}?html=unsafe`)).toMatchObject({ status: 422 });
  const sender = await createTestKey(stack.api, inbox.workspaceId, ['inbox:send']);
  expect(await sender.call('GET', `${path}?html=raw`)).toMatchObject({ status: 403, body: { error: 'forbidden' } });
});

it('one mail to two inboxes of a workspace from a known contact: two copies, one in each inbox, and one contact event', async () => {
  const inbox = await inboxOfNewWorkspace();
  const second = randomUUID();
  const [{ domain_id: domainId }] = await query<{ domain_id: string }>('SELECT domain_id FROM inboxes WHERE id = $1', [inbox.inboxId]);
  await stack.api.db.query('INSERT INTO inboxes (id, workspace_id, domain_id, local_part) VALUES ($1, $2, $3, $4)', { bind: [second, inbox.workspaceId, domainId, 'sales'] });
  const call = stack.api.as(inbox.apiKey);
  const kim = `kim@${senderDomain('spf').domain}`;
  const contact = await call('POST', '/contacts', { identities: [{ channel: 'email', address: kim }] });
  expect(contact.status).toBe(201);
  await send({ from: kim, to: [inbox.address, `sales@${inbox.domain}`], subject: 'Two teams', text: 'For both of you' });
  const [first] = await processed(inbox.inboxId, 1);
  const [copy] = await processed(second, 1);
  expect([first.contact_id, copy.contact_id]).toEqual([(contact.body as { id: string }).id, (contact.body as { id: string }).id]);
  expect(first.thread_id).not.toBe(copy.thread_id);
  expect(await query('SELECT name FROM contact_events WHERE workspace_id = $1', [inbox.workspaceId])).toEqual([{ name: 'email.received' }]);
});

it('a message whose workflow start failed is started by the outbox drain', async () => {
  const inbox = await inboxOfNewWorkspace();
  handOff = 'fail';
  try {
    await send({ from: 'ivan@sender.example.net', to: inbox.address, subject: 'Lost start', text: 'Still here' });
  } finally {
    handOff = 'start';
  }
  const [waiting] = await until('the row accepted', () => messagesOf(inbox.inboxId), (rows) => rows.length === 1);
  expect(waiting).toMatchObject({ status: 'received', workflow_started_at: null });

  const drain = runInboundDispatcher({ db: stack.api.db, client, taskQueuePrefix: stack.api.config.TASK_QUEUE_PREFIX, logger: pino({ level: 'silent' }), intervalMs: 100, olderThanMs: 0 });
  try {
    const [row] = await processed(inbox.inboxId, 1);
    expect(row.workflow_started_at).not.toBeNull();
    expect(row.subject).toBe('Lost start');
  } finally {
    await drain.stop();
  }
});

it('the processing activity delivered twice at once (a redelivery) files the message once and counts it once', async () => {
  const inbox = await inboxOfNewWorkspace();
  handOff = 'fail';
  try {
    await send({ from: 'judy@sender.example.net', to: inbox.address, subject: 'Twice', text: 'Once please' });
  } finally {
    handOff = 'start';
  }
  const [row] = await until('the row accepted', () => messagesOf(inbox.inboxId), (rows) => rows.length === 1);
  const activities = createInboundMailActivities({ db: stack.api.db, blobs, ...temporalPorts(client, stack.api.config.TASK_QUEUE_PREFIX), maxMessageBytes: 1024 * 1024 });
  const input = { workspaceId: inbox.workspaceId, inboxMessageId: row.id };
  const outcomes = await Promise.all([activities.processInboundMail(input), activities.processInboundMail(input)]);
  const again = await activities.processInboundMail(input);

  expect(outcomes.map((outcome) => outcome.status).sort()).toEqual(['already_processed', 'processed']);
  expect(again).toMatchObject({ status: 'already_processed' });
  expect(await threadsOf(inbox.inboxId)).toHaveLength(1);
  expect(await query('SELECT received FROM inbox_daily_counters WHERE inbox_id = $1', [inbox.inboxId])).toEqual([{ received: 1 }]);
  expect(await query("SELECT id FROM platform_events WHERE workspace_id = $1 AND type = 'email.received'", [inbox.workspaceId])).toHaveLength(1);
});
