import { randomUUID } from 'node:crypto';
import { customerWrites, newCustomerNumber } from '../helpers/chat-workspaces';
import { type ChatStack, PUBLIC_BASE_URL, startChatStack } from '../helpers/chat-stack';
import type { EmailStack } from '../helpers/email-stack';
import { createTestWorkspace } from '../helpers/workspaces';
import type { TelegramStandIn } from '../helpers/telegram-stand-in';
import type { TwilioStandIn } from '../helpers/twilio-stand-in';

const CONTENT_SID = 'HX0123456789abcdef0123456789abcdef';

type Body = Record<string, unknown>;

describe('fallbackChain: a send that fails for good moves to the next channel', () => {
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

  async function workspace() {
    const created = await createTestWorkspace(stack, { plan: 'pro', domain: true, whatsapp: twilio, telegram });
    return { ...created, ...created.twilio };
  }

  async function shown(call: ReturnType<EmailStack['api']['as']>, id: string, want: string[]): Promise<Body> {
    for (const deadline = Date.now() + 30_000; Date.now() < deadline; ) {
      const body = (await call('GET', `/messages/${id}`)).body as Body;
      if (want.includes(String(body.status))) return body;
      await new Promise((resolve) => setTimeout(resolve, 150));
    }
    throw new Error(`message ${id} never reached ${want.join('/')}`);
  }

  it('WhatsApp to a number Twilio calls invalid (21211) → failed, then the same message goes by email; both show the link and a fallback event', async () => {
    const { call, domain } = await workspace();
    const customer = newCustomerNumber();
    twilio.refuse(`whatsapp:${customer}`, 'invalid-number');
    const address = `fallback-${randomUUID()}@example.org`;
    const accepted = await call('POST', '/messages', {
      channel: 'whatsapp', to: customer, contentSid: CONTENT_SID, from: `Shop <hi@${domain}>`, subject: 'Your order', text: 'It has shipped',
      fallbackChain: [{ channel: 'email', to: address }], idempotencyKey: key(),
    });
    expect(accepted).toMatchObject({ status: 202, body: { channel: 'whatsapp' } });
    const first = await shown(call, (accepted.body as { id: string }).id, ['failed', 'sent']);
    expect(first).toMatchObject({ status: 'failed', fallbackOf: null, fallbackMessageId: expect.any(String) });
    expect((first.events as Body[]).map((event) => event.type)).toEqual(['failed', 'fallback']);
    const next = await shown(call, first.fallbackMessageId as string, ['sent', 'delivered', 'failed']);
    expect(next).toMatchObject({ status: 'sent', channel: 'email', to: address, subject: 'Your order', fallbackOf: first.id, fallbackMessageId: null });
    expect((next.events as Body[]).map((event) => event.type)).toEqual(['fallback', 'sent']);
    const mail = stack.sink.received.find((received) => received.recipients.includes(address));
    expect(mail?.raw).toContain('It has shipped');
  });

  it('a WhatsApp message Twilio later reports undelivered → the contact\'s Telegram identity gets it', async () => {
    const { call, workspaceId, authToken } = await workspace();
    const customer = newCustomerNumber();
    await customerWrites(stack.api, twilio, workspaceId, authToken, customer);
    const chat = String(200_000 + Math.floor(Math.random() * 1_000_000_000));
    const contact = await call('POST', '/contacts', {
      identities: [
        { channel: 'whatsapp', address: customer, consent: 'opted_in', verified: true, isPrimary: true },
        { channel: 'telegram', address: chat, consent: 'opted_in', verified: true, isPrimary: true },
      ],
    });
    const contactId = (contact.body as { id: string }).id;
    const accepted = await call('POST', '/messages', { channel: 'whatsapp', contactId, text: 'Table ready', fallbackChain: ['telegram'], idempotencyKey: key() });
    expect(accepted).toMatchObject({ status: 202, body: { channel: 'whatsapp' } });
    const sent = await shown(call, (accepted.body as { id: string }).id, ['sent']);
    const path = `/callbacks/twilio/${workspaceId}/status`;
    const status = await twilio.callback({
      postTo: `${stack.api.url}${path}`, signedUrl: `${PUBLIC_BASE_URL}${path}`, authToken,
      params: { MessageSid: sent.providerMessageId as string, MessageStatus: 'undelivered', ErrorCode: '63024' },
    });
    expect(status).toBe(200);
    const failed = await shown(call, sent.id as string, ['failed']);
    const next = await shown(call, failed.fallbackMessageId as string, ['sent', 'failed']);
    expect(next).toMatchObject({ status: 'sent', channel: 'telegram', to: chat, contactId, fallbackOf: sent.id });
    expect(telegram.requests.filter((request) => String(request.params.chat_id) === chat).map((request) => request.params.text)).toEqual(['Table ready']);
  });

  it('chains that cannot work are refused at acceptance: a channel twice, an email step without from, a step without an address', async () => {
    const { call, workspaceId, authToken } = await workspace();
    const customer = newCustomerNumber();
    await customerWrites(stack.api, twilio, workspaceId, authToken, customer);
    const base = { channel: 'whatsapp', to: customer, text: 'x' };
    expect(await call('POST', '/messages', { ...base, fallbackChain: ['whatsapp'], idempotencyKey: key() }))
      .toMatchObject({ status: 422, body: { error: { fieldErrors: { fallbackChain: [expect.stringMatching(/twice/)] } } } });
    expect(await call('POST', '/messages', { ...base, fallbackChain: [{ channel: 'email', to: 'a@example.org' }], idempotencyKey: key() }))
      .toMatchObject({ status: 422, body: { error: { fieldErrors: { from: [expect.any(String)] } } } });
    expect(await call('POST', '/messages', { ...base, fallbackChain: ['telegram'], idempotencyKey: key() }))
      .toMatchObject({ status: 422, body: { error: { fieldErrors: { fallbackChain: [expect.stringMatching(/No address/)] } } } });
  });
  it('the quota spent when the fallback is due → no next message; the failed one\'s fallback event says quota_exceeded', async () => {
    const { call, domain, workspaceId } = await createTestWorkspace(stack, { plan: 'free', domain: true, whatsapp: twilio });
    const customer = newCustomerNumber();
    twilio.refuse(`whatsapp:${customer}`, 'invalid-number');
    await stack.stopDispatcher();
    let id: string;
    try {
      const accepted = await call('POST', '/messages', {
        channel: 'whatsapp', to: customer, contentSid: CONTENT_SID, from: `hi@${domain}`, subject: 'S', text: 'x',
        fallbackChain: [{ channel: 'email', to: 'quota@example.org' }], idempotencyKey: key(),
      });
      expect(accepted.status).toBe(202);
      id = (accepted.body as { id: string }).id;
      // One over the limit: the failure gives its unit back, and the fallback still finds none.
      await stack.api.db.query('UPDATE usage_counters SET used = 3001 WHERE workspace_id = $1', { bind: [workspaceId] });
    } finally {
      stack.startDispatcher();
    }
    const failed = await shown(call, id, ['failed']);
    expect(failed).toMatchObject({ fallbackMessageId: null });
    expect((failed.events as Body[]).map((event) => [event.type, event.reason])).toEqual([
      ['failed', expect.stringMatching(/21211/)],
      ['fallback', expect.stringMatching(/^quota_exceeded/)],
    ]);
  });
  it('WhatsApp free-form text to a customer outside the 24-hour window, with a chain → accepted, fails for the window at delivery, and goes by email', async () => {
    const { call, domain } = await workspace();
    const stranger = newCustomerNumber();
    const address = `window-${randomUUID()}@example.org`;
    const accepted = await call('POST', '/messages', {
      channel: 'whatsapp', to: stranger, from: `hi@${domain}`, subject: 'Hello', text: 'We have news', fallbackChain: [{ channel: 'email', to: address }], idempotencyKey: key(),
    });
    expect(accepted).toMatchObject({ status: 202, body: { channel: 'whatsapp' } });
    const failed = await shown(call, (accepted.body as { id: string }).id, ['failed']);
    expect((failed.events as Body[])[0]).toMatchObject({ type: 'failed', reason: expect.stringMatching(/24 hours/) });
    expect(await shown(call, failed.fallbackMessageId as string, ['sent'])).toMatchObject({ channel: 'email', to: address });
    expect(twilio.sends().filter((request) => request.params.To === `whatsapp:${stranger}`)).toEqual([]);
  });
});
