import { randomUUID } from 'node:crypto';
import { QueryTypes } from 'sequelize';
import { periodKey, usagePeriodAt } from '../../core/plans';
import { customerWrites, newCustomerNumber } from '../helpers/chat-workspaces';
import { type ChatStack, startChatStack } from '../helpers/chat-stack';
import type { EmailStack } from '../helpers/email-stack';
import { createTestKey, createTestWorkspace } from '../helpers/workspaces';
import type { TelegramStandIn } from '../helpers/telegram-stand-in';
import type { TwilioStandIn } from '../helpers/twilio-stand-in';

const CONTENT_SID = 'HX0123456789abcdef0123456789abcdef';
const PNG = Buffer.from('89504e470d0a1a0a0000000d4948445200000001000000010806000000', 'hex');

type Body = Record<string, unknown>;

describe('POST /messages and GET /messages/:id across channels', () => {
  let chat: ChatStack;
  let stack: EmailStack;
  let twilio: TwilioStandIn;
  let telegram: TelegramStandIn;

  beforeAll(async () => {
    chat = await startChatStack();
    ({ stack, twilio, telegram } = chat);
  });
  afterAll(() => chat?.close());

  const key = () => `key-${randomUUID()}`;
  const chatId = () => String(100_000 + Math.floor(Math.random() * 1_000_000_000));

  /** A workspace with a verified domain, a Twilio account, a bot, and a customer who wrote within 24 hours. */
  async function workspace(plan: 'free' | 'pro' = 'pro') {
    const created = await createTestWorkspace(stack, { plan, domain: true, whatsapp: twilio, telegram });
    const customer = newCustomerNumber();
    await customerWrites(stack.api, twilio, created.workspaceId, created.twilio.authToken, customer);
    return { ...created, customer };
  }

  async function statusOf(call: (method: string, path: string) => Promise<{ status: number; body: unknown }>, id: string, want: string[]) {
    for (const deadline = Date.now() + 30_000; Date.now() < deadline; ) {
      const response = await call('GET', `/messages/${id}`);
      const body = response.body as Body;
      if (want.includes(String(body.status))) return body;
      await new Promise((resolve) => setTimeout(resolve, 150));
    }
    throw new Error(`message ${id} never reached ${want.join('/')}`);
  }

  it('WhatsApp text to a customer who wrote today → 202 queued on whatsapp, sent through Twilio, GET /messages/:id shows it with its SID', async () => {
    const { call, customer } = await workspace();
    const accepted = await call('POST', '/messages', { channel: 'whatsapp', to: customer, text: 'Your table is ready', idempotencyKey: key() });
    expect(accepted.status).toBe(202);
    const { id } = accepted.body as { id: string };
    expect(accepted.body).toMatchObject({ id: expect.any(String), status: 'queued', channel: 'whatsapp' });
    const shown = await statusOf(call, id, ['sent', 'failed']);
    expect(shown).toMatchObject({ id, status: 'sent', channel: 'whatsapp', to: customer, provider: 'twilio', providerMessageId: expect.stringMatching(/^SM/) });
    expect((shown.events as Body[]).map((event) => event.type)).toEqual(['sent']);
    expect(twilio.sends().filter((request) => request.params.To === `whatsapp:${customer}`).map((request) => request.params.Body)).toEqual(['Your table is ready']);
  });

  it('WhatsApp free-form text to a number that has not written within 24 hours → 422 naming contentSid; a content template is accepted', async () => {
    const { call } = await workspace();
    const stranger = newCustomerNumber();
    const refused = await call('POST', '/messages', { channel: 'whatsapp', to: stranger, text: 'Hello', idempotencyKey: key() });
    expect(refused.status).toBe(422);
    expect(refused.body).toMatchObject({ error: { fieldErrors: { contentSid: [expect.stringMatching(/24 hours/)] } } });
    const templated = await call('POST', '/messages', { channel: 'whatsapp', to: stranger, contentSid: CONTENT_SID, contentVariables: { 1: 'Ann' }, idempotencyKey: key() });
    expect(templated.status).toBe(202);
    await statusOf(call, (templated.body as { id: string }).id, ['sent']);
    const [sent] = twilio.sends().filter((request) => request.params.To === `whatsapp:${stranger}`);
    expect(sent.params).toMatchObject({ ContentSid: CONTENT_SID, ContentVariables: JSON.stringify({ 1: 'Ann' }) });
  });

  it('WhatsApp with a media attachment → Twilio gets a signed URL of the stored file', async () => {
    const { call, customer } = await workspace();
    const accepted = await call('POST', '/messages', {
      channel: 'whatsapp', to: customer, text: 'Your ticket', attachments: [{ filename: 'ticket.png', content: PNG.toString('base64') }], idempotencyKey: key(),
    });
    expect(accepted.status).toBe(202);
    await statusOf(call, (accepted.body as { id: string }).id, ['sent']);
    const [sent] = twilio.sends().filter((request) => request.params.To === `whatsapp:${customer}`);
    expect(sent.params.MediaUrl).toEqual(expect.stringMatching(/^http.*X-Amz-Signature=/));
  });

  it('recipients a channel cannot read → 422 on to: a WhatsApp number that is not E.164, a Telegram @username', async () => {
    const { call } = await workspace();
    const phone = await call('POST', '/messages', { channel: 'whatsapp', to: '0155 5555', text: 'x', idempotencyKey: key() });
    expect(phone).toMatchObject({ status: 422, body: { error: { fieldErrors: { to: [expect.any(String)] } } } });
    const chat = await call('POST', '/messages', { channel: 'telegram', to: '@someone', text: 'x', idempotencyKey: key() });
    expect(chat).toMatchObject({ status: 422, body: { error: { fieldErrors: { to: [expect.any(String)] } } } });
  });

  it('a channel without its integration → 422 on channel, nothing stored', async () => {
    const { apiKey } = await createTestWorkspace(stack.api);
    const response = await stack.api.as(apiKey)('POST', '/messages', { channel: 'telegram', to: chatId(), text: 'x', idempotencyKey: key() });
    expect(response).toMatchObject({ status: 422, body: { error: { fieldErrors: { channel: [expect.stringMatching(/integrations\/telegram/)] } } } });
  });

  it('Telegram text with a photo → sendMessage then sendPhoto as the workspace\'s bot', async () => {
    const { call, bot } = await workspace();
    const chat = chatId();
    const accepted = await call('POST', '/messages', {
      channel: 'telegram', to: chat, text: '<b>not bold</b>', attachments: [{ filename: 'pic.png', content: PNG.toString('base64') }], idempotencyKey: key(),
    });
    expect(accepted).toMatchObject({ status: 202, body: { status: 'queued', channel: 'telegram' } });
    const shown = await statusOf(call, (accepted.body as { id: string }).id, ['sent', 'failed']);
    expect(shown).toMatchObject({ status: 'sent', provider: 'telegram', providerMessageId: expect.stringMatching(new RegExp(`^${chat}:\\d+$`)) });
    const calls = telegram.requests.filter((request) => String(request.params.chat_id) === chat);
    expect(calls.map((request) => [request.method, request.token])).toEqual([['sendMessage', bot.token], ['sendPhoto', bot.token]]);
    expect(calls[0].params.text).toBe('&lt;b&gt;not bold&lt;/b&gt;');
  });

  it('GET /emails lists email only: a Telegram message is read at GET /messages/:id and is not among the sends', async () => {
    const { call, domain } = await workspace();
    const email = await call('POST', '/messages', { channel: 'email', to: 'list@example.org', from: `a@${domain}`, subject: 'S', text: 'x', idempotencyKey: key() });
    const chat = await call('POST', '/messages', { channel: 'telegram', to: chatId(), text: 'x', idempotencyKey: key() });
    expect([email.status, chat.status]).toEqual([202, 202]);
    const chatMessageId = (chat.body as { id: string }).id;
    const listed = await call('GET', '/emails');
    expect(listed).toMatchObject({ status: 200, body: { total: 1, data: [{ id: (email.body as { id: string }).id }] } });
    expect(JSON.stringify(listed.body)).not.toContain(chatMessageId);
    expect(await call('GET', `/messages/${chatMessageId}`)).toMatchObject({ status: 200, body: { id: chatMessageId, channel: 'telegram' } });
  });

  it('a repeated idempotencyKey → 200 duplicate with the first id on every channel; a different body says bodyMismatch; the key is shared across channels', async () => {
    const { call, customer, domain } = await workspace();
    const chat = chatId();
    const sends: Body[] = [
      { channel: 'telegram', to: chat, text: 'one' },
      { channel: 'whatsapp', to: customer, text: 'two' },
      { channel: 'email', to: 'ann@example.org', from: `hi@${domain}`, subject: 'Three', text: 'three' },
    ];
    for (const send of sends) {
      const idempotencyKey = key();
      const first = await call('POST', '/messages', { ...send, idempotencyKey });
      expect(first.status).toBe(202);
      const { id } = first.body as { id: string };
      expect(await call('POST', '/messages', { ...send, idempotencyKey })).toMatchObject({ status: 200, body: { status: 'duplicate', id, idempotencyKey } });
      const changed = await call('POST', '/messages', { channel: 'telegram', to: chat, text: 'changed', idempotencyKey });
      expect(changed).toMatchObject({ status: 200, body: { status: 'duplicate', id, bodyMismatch: true } });
      // The same key on POST /emails is the same send too.
      expect(await call('POST', '/emails', { to: 'bob@example.org', from: `hi@${domain}`, subject: 'S', text: 'x', idempotencyKey })).toMatchObject({ status: 200, body: { id } });
    }
  });

  it('the monthly quota spent → 402 quota_exceeded on whatsapp and telegram, and the refused key stays free', async () => {
    const { call, workspaceId, customer } = await workspace('free');
    await stack.api.db.query('INSERT INTO usage_counters (workspace_id, period_start, used) VALUES ($1, $2, 3000) ON CONFLICT (workspace_id, period_start) DO UPDATE SET used = 3000', {
      bind: [workspaceId, periodKey(usagePeriodAt(new Date()))],
    });
    const idempotencyKey = key();
    for (const send of [{ channel: 'whatsapp', to: customer, text: 'x' }, { channel: 'telegram', to: chatId(), text: 'x' }]) {
      expect(await call('POST', '/messages', { ...send, idempotencyKey })).toMatchObject({ status: 402, body: { error: 'quota_exceeded', limit: 3000, remaining: 0 } });
    }
    await stack.api.db.query('UPDATE usage_counters SET used = 0 WHERE workspace_id = $1', { bind: [workspaceId] });
    expect(await call('POST', '/messages', { channel: 'whatsapp', to: customer, text: 'x', idempotencyKey })).toMatchObject({ status: 202 });
  });

  it('a suppressed recipient → 409 suppressed naming it, on the channel it is suppressed on only', async () => {
    const { call, customer } = await workspace();
    const chat = chatId();
    expect((await call('POST', '/suppressions', { address: chat, channel: 'telegram', reason: 'manual' })).status).toBe(201);
    const refused = await call('POST', '/messages', { channel: 'telegram', to: chat, text: 'x', idempotencyKey: key() });
    expect(refused).toMatchObject({ status: 409, body: { error: 'suppressed', droppedRecipients: [{ address: chat, reason: 'manual' }] } });
    expect((await call('POST', '/messages', { channel: 'whatsapp', to: customer, text: 'x', idempotencyKey: key() })).status).toBe(202);
  });

  it('scopes: POST and GET /messages need messages:send; email:send alone is refused with 403', async () => {
    const { workspaceId, customer, call } = await workspace();
    const sent = await call('POST', '/messages', { channel: 'whatsapp', to: customer, text: 'x', idempotencyKey: key() });
    const { id } = sent.body as { id: string };
    const emailOnly = stack.api.as((await createTestKey(stack.api, workspaceId, ['email:send'])).apiKey);
    expect(await emailOnly('POST', '/messages', { channel: 'whatsapp', to: customer, text: 'x', idempotencyKey: key() })).toMatchObject({ status: 403, body: { error: 'forbidden', need: 'messages:send' } });
    expect((await emailOnly('GET', `/messages/${id}`)).status).toBe(403);
    const messagesOnly = stack.api.as((await createTestKey(stack.api, workspaceId, ['messages:send'])).apiKey);
    expect((await messagesOnly('GET', `/messages/${id}`)).status).toBe(200);
    expect((await messagesOnly('POST', '/messages', { channel: 'whatsapp', to: customer, text: 'y', idempotencyKey: key() })).status).toBe(202);
  });

  it('email through /messages follows POST /emails: from required, 202 on email, delivered; an email sent by POST /emails reads at GET /messages/:id', async () => {
    const { call, domain } = await workspace();
    const missing = await call('POST', '/messages', { channel: 'email', to: 'ann@example.org', subject: 'S', text: 'x', idempotencyKey: key() });
    expect(missing).toMatchObject({ status: 422, body: { error: { fieldErrors: { from: [expect.any(String)] } } } });
    const accepted = await call('POST', '/messages', { channel: 'email', to: 'ann@example.org', from: `hi@${domain}`, subject: 'Via messages', text: 'x', idempotencyKey: key() });
    expect(accepted).toMatchObject({ status: 202, body: { channel: 'email' } });
    expect(await statusOf(call, (accepted.body as { id: string }).id, ['sent', 'delivered'])).toMatchObject({ channel: 'email', subject: 'Via messages' });
    const viaEmails = await call('POST', '/emails', { to: 'bob@example.org', from: `hi@${domain}`, subject: 'Via emails', text: 'x', idempotencyKey: key() });
    expect(await call('GET', `/messages/${(viaEmails.body as { id: string }).id}`)).toMatchObject({ status: 200, body: { channel: 'email', subject: 'Via emails' } });
  });

  it('a contact and no channel → the contact\'s primary verified identity with consent picks it; none → 422 on contactId; no contact and no channel → 422 on channel', async () => {
    const { call } = await workspace();
    const chat = chatId();
    const contact = await call('POST', '/contacts', {
      identities: [
        { channel: 'email', address: `unverified-${randomUUID()}@example.org`, consent: 'opted_in', verified: false },
        { channel: 'telegram', address: chat, consent: 'opted_in', verified: true, isPrimary: true },
      ],
    });
    const contactId = (contact.body as { id: string }).id;
    const accepted = await call('POST', '/messages', { contactId, text: 'Picked for you', idempotencyKey: key() });
    expect(accepted).toMatchObject({ status: 202, body: { channel: 'telegram' } });
    expect(await statusOf(call, (accepted.body as { id: string }).id, ['sent'])).toMatchObject({ to: chat, contactId });

    const nobody = await call('POST', '/contacts', { identities: [{ channel: 'email', address: `x-${randomUUID()}@example.org` }] });
    const none = await call('POST', '/messages', { contactId: (nobody.body as { id: string }).id, text: 'x', idempotencyKey: key() });
    expect(none).toMatchObject({ status: 422, body: { error: { fieldErrors: { contactId: [expect.any(String)] } } } });
    expect(await call('POST', '/messages', { to: chat, text: 'x', idempotencyKey: key() })).toMatchObject({ status: 422, body: { error: { fieldErrors: { channel: [expect.any(String)] } } } });
    expect((await call('POST', '/messages', { contactId: randomUUID(), text: 'x', idempotencyKey: key() })).status).toBe(404);
  });
  it('templates on chat channels: the channel\'s channelText override is the text; without one, the plain text derived from the HTML', async () => {
    const { call } = await workspace();
    const name = `order-${randomUUID().slice(0, 8)}`;
    const created = await call('POST', '/templates', {
      name, channels: ['email', 'telegram'], format: 'html', subject: 'Order {{ number }}',
      body: '<p>Order <b>{{ number }}</b> shipped</p>', channelText: { telegram: 'Telegram: order {{ number }} is on its way' },
    });
    expect(created.status).toBe(201);
    const plain = await call('POST', '/templates', { name: `${name}-plain`, channels: ['email', 'telegram'], format: 'html', subject: 'S', body: '<p>Order <b>{{ number }}</b> shipped</p>' });
    expect(plain.status).toBe(201);
    const overridden = chatId();
    const derived = chatId();
    for (const [to, templateId] of [[overridden, name], [derived, `${name}-plain`]]) {
      const accepted = await call('POST', '/messages', { channel: 'telegram', to, templateId, variables: { number: 42 }, idempotencyKey: key() });
      expect(accepted.status).toBe(202);
      await statusOf(call, (accepted.body as { id: string }).id, ['sent']);
    }
    const textTo = (chat: string) => telegram.requests.filter((request) => String(request.params.chat_id) === chat).map((request) => request.params.text);
    expect(textTo(overridden)).toEqual(['Telegram: order 42 is on its way']);
    expect(textTo(derived)).toEqual(['Order 42 shipped']);
  });
  it('a customer\'s WhatsApp message (signed inbound callback) → a message.received platform event with the number and text', async () => {
    const { workspaceId, customer } = await workspace();
    const events = await stack.api.db.query<{ type: string; data: Record<string, unknown> }>('SELECT type, data FROM platform_events WHERE workspace_id = $1', {
      bind: [workspaceId],
      type: QueryTypes.SELECT,
    });
    expect(events).toEqual([{ type: 'message.received', data: expect.objectContaining({ channel: 'whatsapp', from: customer, text: 'Hi' }) }]);
  });
});
