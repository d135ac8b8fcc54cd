import { randomUUID } from 'node:crypto';
import { type AddressObject, type ParsedMail, simpleParser } from 'mailparser';
import { QueryTypes } from 'sequelize';
import { insertMessageEvent } from '../../db/repositories/message-events';
import type { ApiResponse } from '../helpers/api-harness';
import { type EmailStack, startEmailStack } from '../helpers/email-stack';
import { createTestWorkspace } from '../helpers/workspaces';
import { receiveMail } from '../helpers/inbox-mail';

/**
 * What an inbox sends, as the provider receives it (the SMTP sink, through the real dispatcher, workflow and
 * channel), and how its inbox row, thread and counters follow the message's events.
 */
let stack: EmailStack;
beforeAll(async () => {
  stack = await startEmailStack({ overrides: { RATE_LIMIT_PER_SECOND: '1000' } });
});
afterAll(() => stack.close());

type Call = (method: string, path: string, body?: unknown) => Promise<ApiResponse>;
interface SendResult {
  id: string;
  threadId: string;
  messageId: string;
  status: string;
}
interface Inbox {
  id: string;
  address: string;
}

async function setUp(): Promise<{ call: Call; workspaceId: string; domain: string; inbox: Inbox }> {
  const { workspaceId, domain, call } = await createTestWorkspace(stack.api, { plan: 'pro', domain: true });
  const created = await call('POST', '/inboxes', { domain, localPart: 'support', displayName: 'Support Team' });
  expect(created.status).toBe(201);
  return { call, workspaceId, domain, inbox: (created.body as { inbox: Inbox }).inbox };
}

async function delivered(workspaceId: string, result: SendResult): Promise<ParsedMail> {
  await stack.waitForStatus(workspaceId, result.messageId, ['sent']);
  const mail = stack.sink.received.find((received) => received.raw.includes(`<${result.messageId}@`));
  if (!mail) throw new Error(`the sink has no message ${result.messageId}`);
  return simpleParser(mail.raw);
}

async function inboxRow(id: string) {
  const rows = await stack.api.db.query<{ status: string; provider_message_id: string | null; message_id_header: string; in_reply_to: string | null; references: string[] }>(
    'SELECT status, provider_message_id, message_id_header, in_reply_to, "references" FROM inbox_messages WHERE id = $1',
    { bind: [id], type: QueryTypes.SELECT },
  );
  return rows[0];
}

async function counters(inboxId: string) {
  const rows = await stack.api.db.query<{ sent: number; delivered: number; bounced: number }>(
    'SELECT sent, delivered, bounced FROM inbox_daily_counters WHERE inbox_id = $1',
    { bind: [inboxId], type: QueryTypes.SELECT },
  );
  return rows[0] ?? { sent: 0, delivered: 0, bounced: 0 };
}

/** The addresses of a To or Cc header, as mailparser gives it (one object or several). */
const addresses = (field: AddressObject | AddressObject[] | undefined) => ([] as AddressObject[]).concat(field ?? []).flatMap((object) => object.value.map((mailbox) => mailbox.address));

/** References as mailparser gives them: one string or several. */
const referencesOf = (parsed: ParsedMail) => ([] as string[]).concat(parsed.references ?? []);

/** Waits for the trigger's effect of the `sent` event recorded in the delivery's transaction. */
async function rowStatus(id: string, status: string): Promise<void> {
  for (const deadline = Date.now() + 10_000; Date.now() < deadline; await new Promise((resolve) => setTimeout(resolve, 50))) {
    if ((await inboxRow(id)).status === status) return;
  }
  throw new Error(`inbox message ${id} never reached ${status}`);
}

describe('sending from an inbox', () => {
  it('a new conversation → 202; the mail leaves from the inbox with its name, a Message-ID the row records, and its attachment; thread in sent', async () => {
    const { call, workspaceId, domain, inbox } = await setUp();
    const response = await call('POST', `/inboxes/${inbox.id}/send`, {
      to: 'Ann <ann@example.org>',
      cc: ['carol@example.org'],
      subject: 'Welcome aboard',
      html: '<p>Hello <a href="https://example.org/start">start</a></p>',
      attachments: [{ filename: 'notes.txt', content: Buffer.from('Notes').toString('base64') }],
    });
    expect(response).toMatchObject({ status: 202, body: { status: 'queued' } });
    const result = response.body as SendResult;
    const parsed = await delivered(workspaceId, result);
    expect(parsed.from?.value).toEqual([{ name: 'Support Team', address: `support@${domain}` }]);
    expect(parsed.subject).toBe('Welcome aboard');
    expect(parsed.messageId).toBe(`<${result.messageId}@${domain}>`);
    expect(parsed.inReplyTo).toBeUndefined();
    // Inbox mail is correspondence: links as written, no pixel.
    expect(parsed.html).toContain('href="https://example.org/start"');
    expect(parsed.attachments.map((part) => [part.filename, part.content.toString()])).toEqual([['notes.txt', 'Notes']]);

    await rowStatus(result.id, 'sent');
    const [message] = await stack.api.db.query<{ provider_message_id: string }>('SELECT provider_message_id FROM messages WHERE id = $1', {
      bind: [result.messageId],
      type: QueryTypes.SELECT,
    });
    expect(await inboxRow(result.id)).toMatchObject({ status: 'sent', message_id_header: `${result.messageId}@${domain}`, provider_message_id: message.provider_message_id });
    const detail = await call('GET', `/inboxes/${inbox.id}/threads/${result.threadId}`);
    expect(detail).toMatchObject({
      status: 200,
      body: {
        thread: { folder: 'sent', messageCount: 1, subject: 'Welcome aboard', participants: ['ann@example.org', 'carol@example.org'] },
        messages: [{ id: result.id, direction: 'out', status: 'sent', sendId: result.messageId, to: ['Ann <ann@example.org>'], cc: ['carol@example.org'], attachments: [{ filename: 'notes.txt' }] }],
      },
    });
    expect(await counters(inbox.id)).toMatchObject({ sent: 1 });
  });

  it('the same idempotencyKey twice → 200 duplicate with the first message; one row, one counted send', async () => {
    const { call, inbox } = await setUp();
    const send = { to: 'dan@example.org', subject: 'Once', text: 'Only once', idempotencyKey: `inbox-${randomUUID()}` };
    const first = await call('POST', `/inboxes/${inbox.id}/send`, send);
    const second = await call('POST', `/inboxes/${inbox.id}/send`, send);
    expect(first.status).toBe(202);
    const { id, threadId, messageId } = first.body as SendResult;
    expect(second).toMatchObject({ status: 200, body: { status: 'duplicate', id, threadId, messageId } });
    const [{ count }] = await stack.api.db.query<{ count: string }>('SELECT count(*) FROM inbox_messages WHERE inbox_id = $1', { bind: [inbox.id], type: QueryTypes.SELECT });
    expect(count).toBe('1');
    expect(await counters(inbox.id)).toMatchObject({ sent: 1 });
  });
});

describe('replying', () => {
  it('a reply → In-Reply-To is the answered Message-ID, References ends with it, "Re: " once, quote below, attachment; same thread', async () => {
    const { call, workspaceId, inbox } = await setUp();
    const root = `root-${randomUUID()}@mail.example.org`;
    const answered = `second-${randomUUID()}@mail.example.org`;
    const { threadId } = await receiveMail(stack.api.db, {
      workspaceId, inboxId: inbox.id, messageIdHeader: answered, references: [root], from: { address: 'ann@example.org', name: 'Ann' },
      to: [inbox.address], subject: 'Re: Order 42', text: 'Where is my order?',
    });
    const response = await call('POST', `/inboxes/${inbox.id}/threads/${threadId}/reply`, {
      text: 'It ships today.',
      quote: true,
      attachments: [{ filename: 'label.txt', content: Buffer.from('Label').toString('base64') }],
    });
    expect(response).toMatchObject({ status: 202, body: { threadId } });
    const result = response.body as SendResult;
    const parsed = await delivered(workspaceId, result);
    expect(parsed.inReplyTo).toBe(`<${answered}>`);
    expect(referencesOf(parsed)).toEqual([`<${root}>`, `<${answered}>`]);
    expect(parsed.subject).toBe('Re: Order 42');
    expect(addresses(parsed.to)).toEqual(['ann@example.org']);
    expect(parsed.text).toContain('It ships today.');
    expect(parsed.text).toContain('> Where is my order?');
    expect(parsed.attachments.map((part) => part.filename)).toEqual(['label.txt']);
    expect(await inboxRow(result.id)).toMatchObject({ in_reply_to: answered, references: [root, answered] });
    const thread = (await call('GET', `/inboxes/${inbox.id}/threads/${threadId}`)).body as { thread: { messageCount: number; folder: string }; messages: unknown[] };
    expect(thread.thread).toMatchObject({ messageCount: 2, folder: 'inbox' });
  });

  it('reply-all → the sender and the other To and Cc recipients, never the inbox; a plain reply → the sender only', async () => {
    const { call, workspaceId, inbox } = await setUp();
    const { threadId } = await receiveMail(stack.api.db, {
      workspaceId, inboxId: inbox.id, messageIdHeader: `${randomUUID()}@mail.example.org`, from: { address: 'ann@example.org' },
      to: [inbox.address.toUpperCase(), 'bob@example.org'], cc: ['carol@example.org', inbox.address], subject: 'Team lunch', text: 'Friday?',
    });
    const all = await delivered(workspaceId, (await call('POST', `/inboxes/${inbox.id}/threads/${threadId}/reply`, { text: 'Yes', replyAll: true })).body as SendResult);
    expect(addresses(all.to)).toEqual(['ann@example.org', 'bob@example.org']);
    expect(addresses(all.cc)).toEqual(['carol@example.org']);
    const one = await delivered(workspaceId, (await call('POST', `/inboxes/${inbox.id}/threads/${threadId}/reply`, { text: 'Again' })).body as SendResult);
    expect(addresses(one.to)).toEqual(['ann@example.org']);
    expect(one.cc).toBeUndefined();
    expect(one.subject).toBe('Re: Team lunch');
  });

  it('a reply draft with an attachment, sent → threads with the answered message; sent again → 200 duplicate', async () => {
    const { call, workspaceId, inbox } = await setUp();
    const answered = `${randomUUID()}@mail.example.org`;
    const { threadId } = await receiveMail(stack.api.db, {
      workspaceId, inboxId: inbox.id, messageIdHeader: answered, from: { address: 'erin@example.org' }, to: [inbox.address], subject: 'Invoice', text: 'Send it please',
    });
    const drafted = await call('POST', `/inboxes/${inbox.id}/drafts`, {
      threadId,
      text: 'Attached.',
      attachments: [{ filename: 'invoice.txt', content: Buffer.from('INV-1').toString('base64') }],
    });
    expect(drafted).toMatchObject({ status: 201, body: { threadId } });
    const { draftId } = drafted.body as { draftId: string };
    const sent = await call('POST', `/inboxes/${inbox.id}/drafts/${draftId}/send`);
    expect(sent).toMatchObject({ status: 202, body: { id: draftId, threadId, status: 'queued' } });
    const parsed = await delivered(workspaceId, sent.body as SendResult);
    expect(parsed).toMatchObject({ inReplyTo: `<${answered}>`, subject: 'Re: Invoice' });
    expect(referencesOf(parsed)).toEqual([`<${answered}>`]);
    expect(addresses(parsed.to)).toEqual(['erin@example.org']);
    expect(parsed.attachments.map((part) => [part.filename, part.content.toString()])).toEqual([['invoice.txt', 'INV-1']]);
    expect(await call('POST', `/inboxes/${inbox.id}/drafts/${draftId}/send`)).toMatchObject({ status: 200, body: { status: 'duplicate', id: draftId } });
    const detail = (await call('GET', `/inboxes/${inbox.id}/threads/${threadId}`)).body as { thread: { messageCount: number }; messages: Array<{ id: string; status: string }> };
    expect(detail.thread.messageCount).toBe(2);
    expect(detail.messages.map((message) => message.id)).toContain(draftId);
    expect(await counters(inbox.id)).toMatchObject({ sent: 1 });
  });

  it('a reply on a thread with no inbound mail answers its last message (our previous one): In-Reply-To and References name it, never the reply\'s own Message-ID', async () => {
    const { call, workspaceId, domain, inbox } = await setUp();
    const first = (await call('POST', `/inboxes/${inbox.id}/send`, { to: 'gus@example.org', subject: 'Quote', text: 'Our offer' })).body as SendResult;
    await delivered(workspaceId, first);
    const second = (await call('POST', `/inboxes/${inbox.id}/threads/${first.threadId}/reply`, { text: 'Following up' })).body as SendResult;
    const followUp = await delivered(workspaceId, second);
    expect(followUp.messageId).toBe(`<${second.messageId}@${domain}>`);
    expect(followUp.inReplyTo).toBe(`<${first.messageId}@${domain}>`);
    expect(referencesOf(followUp)).toEqual([`<${first.messageId}@${domain}>`]);
    expect(addresses(followUp.to)).toEqual(['gus@example.org']);
    expect(followUp.subject).toBe('Re: Quote');

    // A third answers the second, the thread's last message now, with the whole chain in References.
    const third = await delivered(workspaceId, (await call('POST', `/inboxes/${inbox.id}/threads/${first.threadId}/reply`, { text: 'Still there?' })).body as SendResult);
    expect(third.inReplyTo).toBe(`<${second.messageId}@${domain}>`);
    expect(referencesOf(third)).toEqual([`<${first.messageId}@${domain}>`, `<${second.messageId}@${domain}>`]);
  });

  it('a reply to our own message that SES sent names the Message-ID SES gave it (the one the recipient holds), not the one we generated', async () => {
    const { call, workspaceId, domain, inbox } = await setUp();
    const first = (await call('POST', `/inboxes/${inbox.id}/send`, { to: 'hal@example.org', subject: 'Renewal', text: 'Due soon' })).body as SendResult;
    await delivered(workspaceId, first);
    await rowStatus(first.id, 'sent');
    // As if SES had carried it: SES rewrites the Message-ID to <providerId@region.amazonses.com>.
    const providerId = `0102019a${randomUUID().replace(/-/g, '').slice(0, 8)}-${randomUUID()}-000000`;
    await stack.api.db.query("UPDATE messages SET provider = 'ses', provider_message_id = $2 WHERE id = $1", { bind: [first.messageId, providerId] });
    await stack.api.db.query("UPDATE domains SET region = 'eu-west-1' WHERE workspace_id = $1 AND name = $2", { bind: [workspaceId, domain] });
    const reply = await delivered(workspaceId, (await call('POST', `/inboxes/${inbox.id}/threads/${first.threadId}/reply`, { text: 'Reminder' })).body as SendResult);
    expect(reply.inReplyTo).toBe(`<${providerId}@eu-west-1.amazonses.com>`);
    expect(referencesOf(reply)).toEqual([`<${providerId}@eu-west-1.amazonses.com>`]);
  });

  it('a new-conversation draft sent → its thread moves from drafts to sent', async () => {
    const { call, workspaceId, inbox } = await setUp();
    const { draftId, threadId } = (await call('POST', `/inboxes/${inbox.id}/drafts`, { to: 'fay@example.org', subject: 'Proposal', html: '<p>Draft</p>' })).body as { draftId: string; threadId: string };
    const result = (await call('POST', `/inboxes/${inbox.id}/drafts/${draftId}/send`)).body as SendResult;
    const parsed = await delivered(workspaceId, result);
    expect(parsed).toMatchObject({ subject: 'Proposal' });
    expect(parsed.inReplyTo).toBeUndefined();
    const folders = async (folder: string) => ((await call('GET', `/inboxes/${inbox.id}/threads?folder=${folder}`)).body as { threads: Array<{ id: string; messageCount: number }> }).threads;
    expect(await folders('drafts')).toEqual([]);
    expect(await folders('sent')).toEqual([expect.objectContaining({ id: threadId, messageCount: 1 })]);
  });
});

describe('status sync', () => {
  it('sent, delivered (twice) and bounced events move each inbox row and the daily counters once; metrics sum them', async () => {
    const { call, workspaceId, inbox } = await setUp();
    const send = async (to: string) => (await call('POST', `/inboxes/${inbox.id}/send`, { to, subject: 'Status', text: 'x' })).body as SendResult;
    const [good, bad] = [await send('good@example.org'), await send('bad@example.org')];
    await delivered(workspaceId, good);
    await delivered(workspaceId, bad);
    await rowStatus(good.id, 'sent');
    await rowStatus(bad.id, 'sent');

    await insertMessageEvent(stack.api.db, workspaceId, good.messageId, { type: 'delivered', providerEventId: 'delivery-1' });
    await insertMessageEvent(stack.api.db, workspaceId, good.messageId, { type: 'delivered', providerEventId: 'delivery-1' });
    await insertMessageEvent(stack.api.db, workspaceId, good.messageId, { type: 'delivered', providerEventId: 'delivery-2' });
    // A late `sent` never moves a row back.
    await insertMessageEvent(stack.api.db, workspaceId, good.messageId, { type: 'sent', providerEventId: 'sent-again' });
    await insertMessageEvent(stack.api.db, workspaceId, bad.messageId, { type: 'bounce', bounceType: 'hard', providerEventId: 'bounce-1' });
    await insertMessageEvent(stack.api.db, workspaceId, bad.messageId, { type: 'bounce', bounceType: 'hard', providerEventId: 'bounce-2' });

    expect([(await inboxRow(good.id)).status, (await inboxRow(bad.id)).status]).toEqual(['delivered', 'bounced']);
    expect(await counters(inbox.id)).toEqual({ sent: 2, delivered: 1, bounced: 1 });
    const metrics = (await call('GET', '/inboxes/metrics')).body as { kpis: object; perInbox: Array<object> };
    expect(metrics.kpis).toEqual({ received: 0, sent: 2, delivered: 1, bounced: 1, deliveryRate: 0.5, bounceRate: 0.5 });
    expect(metrics.perInbox).toEqual([{ inboxId: inbox.id, address: inbox.address, received: 0, sent: 2, delivered: 1, bounced: 1 }]);
  });

  it('a send the relay refuses for good (550 to MAIL FROM) → its inbox row ends failed; nothing counted delivered or bounced', async () => {
    const { call, workspaceId, inbox } = await setUp();
    // A 550 to the sender refuses us, not the recipient: a failure, not a bounce (docs/emails.md).
    stack.sink.refuseSender([550, '5.7.1 Relay access denied']);
    const result = (await call('POST', `/inboxes/${inbox.id}/send`, { to: 'refused@example.org', subject: 'No', text: 'x' })).body as SendResult;
    await stack.waitForStatus(workspaceId, result.messageId, ['failed']).finally(() => stack.sink.refuseSender(null));
    await rowStatus(result.id, 'failed');
    expect(await counters(inbox.id)).toEqual({ sent: 1, delivered: 0, bounced: 0 });
  });
});
