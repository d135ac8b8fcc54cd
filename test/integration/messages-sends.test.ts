import { randomUUID } from 'node:crypto';
import { customerWrites, newCustomerNumber } from '../helpers/chat-workspaces';
import { type ChatStack, startChatStack } from '../helpers/chat-stack';
import type { EmailStack } from '../helpers/email-stack';
import type { TelegramStandIn } from '../helpers/telegram-stand-in';
import type { TwilioStandIn } from '../helpers/twilio-stand-in';
import { addTestDomain, createTestWorkspace } from '../helpers/workspaces';

// POST /messages as decided: an email without `from` goes from the workspace's default sender, and a
// recipient suppressed on one channel of a fallback chain is reached on the next.
type Body = Record<string, unknown>;

describe('POST /messages: the default sender and fallback on suppression', () => {
  let chat: ChatStack;
  let stack: EmailStack;
  let twilio: TwilioStandIn;
  let telegram: TelegramStandIn;

  beforeAll(async () => {
    chat = await startChatStack();
    ({ stack, twilio, telegram } = chat);
  });
  afterAll(() => chat?.close());

  jest.setTimeout(90_000);

  const key = () => `key-${randomUUID()}`;
  const chatId = () => String(100_000 + Math.floor(Math.random() * 1_000_000_000));

  async function workspace() {
    const created = await createTestWorkspace(stack, { plan: 'pro', domain: true, whatsapp: twilio, telegram });
    const customer = newCustomerNumber();
    await customerWrites(stack.api, twilio, created.workspaceId, created.twilio.authToken, customer);
    return { ...created, customer };
  }

  async function statusOf(call: (method: string, path: string) => Promise<{ status: number; body: unknown }>, id: string, want: string[]): Promise<Body> {
    for (const deadline = Date.now() + 30_000; Date.now() < deadline; ) {
      const body = (await call('GET', `/messages/${id}`)).body as Body;
      if (want.includes(String(body.status))) return body;
      await new Promise((resolve) => setTimeout(resolve, 150));
    }
    throw new Error(`message ${id} never reached ${want.join('/')}`);
  }

  it('an email without from goes from the default sender of the verified domain, with its display name; with none set, 422 names from', async () => {
    const { call, domain, domainId } = await workspace();
    const to = `nofrom-${randomUUID().slice(0, 8)}@example.org`;
    const body = { channel: 'email', to, subject: 'No from', text: 'Sent by default', idempotencyKey: key() };
    const refused = await call('POST', '/messages', body);
    expect(refused).toMatchObject({ status: 422, body: { error: { fieldErrors: { from: [expect.stringMatching(/default sender/)] } } } });

    expect(await call('PATCH', `/domains/${domainId}`, { defaultFromAddress: `hello@${domain}`, defaultFromName: 'Acme' })).toMatchObject({ status: 200 });
    const accepted = await call('POST', '/messages', body);
    expect(accepted).toMatchObject({ status: 202, body: { channel: 'email' } });
    const shown = await statusOf(call, (accepted.body as { id: string }).id, ['sent', 'delivered']);
    expect(shown).toMatchObject({ from: `Acme <hello@${domain}>` });
    const mail = stack.sink.received.find((received) => received.recipients.includes(to));
    expect(mail?.raw).toMatch(new RegExp(`^From: Acme <hello@${domain.replace(/\./g, '\\.')}>`, 'm'));
  });

  it('with several verified domains the default sender is that of the domain verified first, as a journey\'s', async () => {
    const { call, domain, domainId, workspaceId } = await workspace();
    const second = await addTestDomain(stack, workspaceId);
    await call('PATCH', `/domains/${second.domainId}`, { defaultFromAddress: `second@${second.domain}` });
    await call('PATCH', `/domains/${domainId}`, { defaultFromAddress: `first@${domain}` });
    await stack.api.db.query("UPDATE domains SET verified_at = now() - interval '1 day' WHERE id = $1", { bind: [domainId] });
    await stack.api.db.query('UPDATE domains SET verified_at = now() WHERE id = $1', { bind: [second.domainId] });
    const accepted = await call('POST', '/messages', { channel: 'email', to: 'ann@example.org', subject: 'S', text: 'x', idempotencyKey: key() });
    expect(accepted).toMatchObject({ status: 202 });
    expect((await call('GET', `/messages/${(accepted.body as { id: string }).id}`)).body).toMatchObject({ from: expect.stringContaining(`first@${domain}`) });
  });

  it('WhatsApp suppressed, email next in the chain → 202 on email, the suppressed number in droppedRecipients, the mail delivered', async () => {
    const { call, customer, domain } = await workspace();
    expect((await call('POST', '/suppressions', { address: customer, channel: 'whatsapp', reason: 'manual' })).status).toBe(201);
    const address = `next-${randomUUID().slice(0, 8)}@example.org`;
    const accepted = await call('POST', '/messages', {
      channel: 'whatsapp', to: customer, from: `Shop <hi@${domain}>`, subject: 'Your order', text: 'It has shipped',
      fallbackChain: [{ channel: 'email', to: address }], idempotencyKey: key(),
    });
    expect(accepted).toMatchObject({ status: 202, body: { channel: 'email', droppedRecipients: [{ address: customer, reason: 'manual' }] } });
    expect(await statusOf(call, (accepted.body as { id: string }).id, ['sent', 'delivered'])).toMatchObject({ channel: 'email', to: address });
    expect(twilio.requests.some((request) => String(request.params.To).includes(customer))).toBe(false);
  });

  it('suppressed on the first two channels of the chain → the third takes it', async () => {
    const { call, customer, domain } = await workspace();
    const address = `both-${randomUUID().slice(0, 8)}@example.org`;
    const chat = chatId();
    await call('POST', '/suppressions', { address, channel: 'email', reason: 'manual' });
    await call('POST', '/suppressions', { address: customer, channel: 'whatsapp', reason: 'manual' });
    const accepted = await call('POST', '/messages', {
      channel: 'email', to: address, from: `hi@${domain}`, subject: 'S', text: 'Table ready',
      fallbackChain: [{ channel: 'whatsapp', to: customer }, { channel: 'telegram', to: chat }], idempotencyKey: key(),
    });
    expect(accepted).toMatchObject({ status: 202, body: { channel: 'telegram' } });
    expect((accepted.body as { droppedRecipients: Body[] }).droppedRecipients.map((entry) => entry.address)).toEqual([address, customer]);
    await statusOf(call, (accepted.body as { id: string }).id, ['sent', 'delivered']);
    expect(telegram.requests.filter((request) => String(request.params.chat_id) === chat).map((request) => request.params.text)).toEqual(['Table ready']);
  });

  it('suppressed on every channel of the chain → 409 suppressed naming each, nothing stored, the key still free', async () => {
    const { call, customer, domain } = await workspace();
    const address = `all-${randomUUID().slice(0, 8)}@example.org`;
    await call('POST', '/suppressions', { address, channel: 'email', reason: 'manual' });
    await call('POST', '/suppressions', { address: customer, channel: 'whatsapp', reason: 'manual' });
    const idempotencyKey = key();
    const body = { channel: 'whatsapp', to: customer, from: `hi@${domain}`, subject: 'S', text: 'x', fallbackChain: [{ channel: 'email', to: address }], idempotencyKey };
    const refused = await call('POST', '/messages', body);
    expect(refused).toMatchObject({ status: 409, body: { error: 'suppressed', droppedRecipients: [{ address: customer, reason: 'manual' }, { address, reason: 'manual' }] } });
    await call('DELETE', `/suppressions/${encodeURIComponent(address)}`);
    expect(await call('POST', '/messages', body)).toMatchObject({ status: 202, body: { channel: 'email' } });
  });
});
