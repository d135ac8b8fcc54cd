import { randomUUID } from 'node:crypto';
import { createList, sendNow, waitForCampaign } from '../helpers/campaigns';
import { customerWrites, newCustomerNumber } from '../helpers/chat-workspaces';
import { QueryTypes } from 'sequelize';
import { type ChatStack, PUBLIC_BASE_URL, startChatStack } from '../helpers/chat-stack';
import type { EmailStack } from '../helpers/email-stack';
import { createTestWorkspace } from '../helpers/workspaces';
import type { TelegramStandIn } from '../helpers/telegram-stand-in';
import type { TwilioStandIn } from '../helpers/twilio-stand-in';

// Campaigns on WhatsApp and Telegram, through the real stack: the API, the campaign workflow on Temporal,
// the outbox and the chat deliveries, against the Twilio and Bot API stand-ins.
const CONTENT_SID = 'HX0123456789abcdef0123456789abcdef';

type Body = Record<string, unknown>;
type Call = ReturnType<EmailStack['api']['as']>;

let chat: ChatStack;
let stack: EmailStack;
let twilio: TwilioStandIn;
let telegram: TelegramStandIn;

beforeAll(async () => {
  // Telegram paced at 10/s, so a campaign of 60 is still sending when the cancel test acts.
  chat = await startChatStack({ TELEGRAM_RATE_PER_SECOND: '10' });
  ({ stack, twilio, telegram } = chat);
});
afterAll(() => chat?.close());

jest.setTimeout(120_000);

const chatId = () => String(200_000 + Math.floor(Math.random() * 1_000_000_000));

type Identity = { channel: 'email' | 'whatsapp' | 'telegram'; address: string };

/** A contact with these primary identities (verified and opted in, as chat marketing needs), on the list. */
async function contactOn(call: Call, listId: string, identities: Identity[], attributes: Record<string, string> = {}): Promise<string> {
  const created = await call('POST', '/contacts', {
    attributes,
    identities: identities.map((identity) => ({ ...identity, consent: 'opted_in', verified: true, isPrimary: true })),
  });
  expect(created.status).toBe(201);
  const id = (created.body as { id: string }).id;
  expect((await call('POST', `/lists/${listId}/contacts`, { contactIds: [id] })).status).toBeLessThan(300);
  return id;
}

const twilioSendsTo = (number: string) => twilio.sends().filter((request) => request.params.To === `whatsapp:${number}`);
const telegramSendsTo = (chat: string) => telegram.requests.filter((request) => request.method === 'sendMessage' && String(request.params.chat_id) === chat);

describe('chat channels in campaigns', () => {
  it('WhatsApp content template with a Telegram fallback → the estimate counts each channel; each contact gets it on the first channel that reaches it; the unreachable one is counted as skipped', async () => {
    const { call } = await createTestWorkspace(stack, { plan: 'pro', domain: true, whatsapp: twilio, telegram });
    const listId = await createList(call);
    const [onWhatsApp, onBoth] = [newCustomerNumber(), newCustomerNumber()];
    const [onTelegram, alsoTelegram] = [chatId(), chatId()];
    await contactOn(call, listId, [{ channel: 'whatsapp', address: onWhatsApp }]);
    await contactOn(call, listId, [{ channel: 'telegram', address: onTelegram }]);
    await contactOn(call, listId, [{ channel: 'whatsapp', address: onBoth }, { channel: 'telegram', address: alsoTelegram }]);
    await contactOn(call, listId, [{ channel: 'email', address: `email-only-${randomUUID()}@example.org` }]);

    const created = await call('POST', '/campaigns', {
      name: 'Sale', listId, channel: 'whatsapp', fallbackChain: ['telegram'], contentSid: CONTENT_SID, contentVariables: { 1: 'Ann' }, text: 'Sale today',
    });
    expect(created).toMatchObject({ status: 201, body: { channel: 'whatsapp', fallbackChain: ['telegram'], contentSid: CONTENT_SID, skipped: { noReachableIdentity: null } } });
    const id = (created.body as { id: string }).id;
    const estimate = await call('POST', `/campaigns/${id}/estimate`);
    expect(estimate.body).toMatchObject({
      estimate: { listMembers: 4, recipients: 3, excluded: 1, noAddress: 1, byChannel: { email: 0, whatsapp: 2, telegram: 1 } },
    });

    expect(await sendNow(call, id)).toMatchObject({ status: 202, body: { recipients: 3 } });
    const detail = await waitForCampaign(call, id, ['sent', 'failed']);
    expect(detail).toMatchObject({ status: 'sent', recipientCount: 3, skipped: { noReachableIdentity: 1, outsideWhatsAppWindow: 0 }, progress: { sent: 3, failed: 0 } });

    for (const number of [onWhatsApp, onBoth]) {
      expect(twilioSendsTo(number)).toEqual([expect.objectContaining({ params: expect.objectContaining({ ContentSid: CONTENT_SID, ContentVariables: '{"1":"Ann"}' }) })]);
    }
    expect(telegramSendsTo(onTelegram)).toEqual([expect.objectContaining({ params: expect.objectContaining({ text: 'Sale today' }) })]);
    expect(telegramSendsTo(alsoTelegram)).toEqual([]);
    const usage = (await call('GET', '/usage')).body as { messages: Body };
    expect(usage.messages).toMatchObject({ byChannel: { email: 0, whatsapp: 2, telegram: 1 }, byKind: expect.objectContaining({ campaign: 3 }) });
  });

  it('free-form WhatsApp text → the contact who wrote within 24 hours gets it; the one who did not is skipped with outside_whatsapp_window and its quota unit given back', async () => {
    const { call, workspaceId, twilio: account } = await createTestWorkspace(stack, { plan: 'pro', whatsapp: twilio });
    const listId = await createList(call);
    const [wrote, silent] = [newCustomerNumber(), newCustomerNumber()];
    await contactOn(call, listId, [{ channel: 'whatsapp', address: wrote }]);
    await contactOn(call, listId, [{ channel: 'whatsapp', address: silent }]);
    await customerWrites(stack.api, twilio, workspaceId, account.authToken, wrote);

    const created = await call('POST', '/campaigns', { name: 'Back in stock', listId, channel: 'whatsapp', html: '<p>Back <b>in stock</b></p>' });
    const id = (created.body as { id: string }).id;
    expect(await sendNow(call, id)).toMatchObject({ status: 202, body: { recipients: 2 } });
    const detail = await waitForCampaign(call, id, ['sent', 'failed']);
    expect(detail).toMatchObject({ status: 'sent', recipientCount: 2, skipped: { noReachableIdentity: 0, outsideWhatsAppWindow: 1 } });

    expect(twilioSendsTo(wrote)).toEqual([expect.objectContaining({ params: expect.objectContaining({ Body: 'Back in stock' }) })]);
    expect(twilioSendsTo(silent)).toEqual([]);
    const usage = (await call('GET', '/usage')).body as { messages: Body };
    expect(usage.messages).toMatchObject({ used: 1, byChannel: { email: 0, whatsapp: 1, telegram: 0 } });

    // Twilio's delivered and read callbacks move the campaign's metrics as email's events do.
    const [sent] = await stack.api.db.query<{ id: string; provider_message_id: string }>(
      'SELECT id, provider_message_id FROM messages WHERE workspace_id = $1 AND campaign_id = $2',
      { bind: [workspaceId, id], type: QueryTypes.SELECT },
    );
    expect(await call('GET', `/messages/${sent.id}`)).toMatchObject({ status: 200, body: { channel: 'whatsapp', kind: 'campaign', campaignId: id, to: wrote } });
    const path = `/callbacks/twilio/${workspaceId}/status`;
    for (const status of ['delivered', 'read']) {
      expect(await twilio.callback({
        postTo: `${stack.api.url}${path}`, signedUrl: `${PUBLIC_BASE_URL}${path}`, authToken: account.authToken,
        params: { MessageSid: sent.provider_message_id, MessageStatus: status },
      })).toBe(200);
    }
    expect((await call('GET', `/campaigns/${id}`)).body).toMatchObject({ metrics: { recipients: 2, delivered: 1, uniqueOpens: 1, openRate: 1 } });
  });

  it('a chat channel the workspace has no integration for → 422 naming channel or fallbackChain at create; an integration deleted after → 422 naming channel at estimate and send, and it stays a draft', async () => {
    const bare = await createTestWorkspace(stack, { plan: 'pro' });
    const listId = await createList(bare.call);
    expect(await bare.call('POST', '/campaigns', { name: 'T', listId, channel: 'telegram', text: 'Hi' })).toMatchObject({
      status: 422,
      body: { error: { fieldErrors: { channel: [expect.stringContaining('PUT /integrations/telegram')] } } },
    });
    expect(await bare.call('POST', '/campaigns', { name: 'T', listId, channel: 'email', fallbackChain: ['whatsapp'], text: 'Hi' })).toMatchObject({
      status: 422,
      body: { error: { fieldErrors: { fallbackChain: [expect.stringContaining('PUT /integrations/twilio')] } } },
    });
    const draft = await bare.call('POST', '/campaigns', { name: 'T', listId, text: 'Hi' });
    expect(await bare.call('PATCH', `/campaigns/${(draft.body as { id: string }).id}`, { channel: 'whatsapp' })).toMatchObject({
      status: 422,
      body: { error: { fieldErrors: { channel: [expect.any(String)] } } },
    });

    const { call } = await createTestWorkspace(stack, { plan: 'pro', telegram });
    const list = await createList(call);
    await contactOn(call, list, [{ channel: 'telegram', address: chatId() }]);
    const created = await call('POST', '/campaigns', { name: 'T', listId: list, channel: 'telegram', text: 'Hi' });
    expect(created.status).toBe(201);
    const id = (created.body as { id: string }).id;
    const { confirmationToken } = (await call('POST', `/campaigns/${id}/estimate`)).body as { confirmationToken: string };
    expect((await call('DELETE', '/integrations/telegram')).status).toBeLessThan(300);
    const refused = { status: 422, body: { error: { fieldErrors: { channel: [expect.stringContaining('PUT /integrations/telegram')] } } } };
    expect(await call('POST', `/campaigns/${id}/estimate`)).toMatchObject(refused);
    expect(await call('POST', `/campaigns/${id}/send`, { confirmationToken })).toMatchObject(refused);
    expect(await call('GET', `/campaigns/${id}`)).toMatchObject({ status: 200, body: { status: 'draft' } });
  });

  it('a Telegram campaign whose text names the contact\'s attributes → each contact reads its own values, as an email campaign\'s would', async () => {
    const { call } = await createTestWorkspace(stack, { plan: 'pro', telegram });
    const listId = await createList(call);
    const chats = [chatId(), chatId()];
    for (const [index, name] of ['Ann', 'Bo'].entries()) {
      await contactOn(call, listId, [{ channel: 'telegram', address: chats[index] }], { first_name: name });
    }
    const id = ((await call('POST', '/campaigns', { name: 'Hello', listId, channel: 'telegram', text: 'Hi {{ first_name }} ({{ contact.first_name | upcase }})' })).body as { id: string }).id;
    expect(await sendNow(call, id)).toMatchObject({ status: 202, body: { recipients: 2 } });
    expect(await waitForCampaign(call, id, ['sent', 'failed'])).toMatchObject({ status: 'sent', progress: { sent: 2, failed: 0 } });
    expect(telegramSendsTo(chats[0]).map((request) => request.params.text)).toEqual(['Hi Ann (ANN)']);
    expect(telegramSendsTo(chats[1]).map((request) => request.params.text)).toEqual(['Hi Bo (BO)']);
  });

  it('a chat campaign whose text does not parse as Liquid → 422 template_invalid naming text at create', async () => {
    const { call } = await createTestWorkspace(stack, { plan: 'pro', telegram });
    const listId = await createList(call);
    expect(await call('POST', '/campaigns', { name: 'Broken', listId, channel: 'telegram', text: 'Hi {{ first_name ' })).toMatchObject({
      status: 422,
      body: { error: 'template_invalid', field: 'text' },
    });
  });

  it('cancel while a Telegram campaign sends → its waiting messages become canceled and their quota is given back on telegram', async () => {
    const { call, workspaceId, bot } = await createTestWorkspace(stack, { plan: 'pro', telegram });
    const listId = await createList(call);
    const chats = Array.from({ length: 60 }, () => chatId());
    const contacts = chats.map(() => randomUUID());
    await stack.api.db.query('INSERT INTO contacts (id, workspace_id) SELECT unnest($1::uuid[]), $2', { bind: [contacts, workspaceId] });
    await stack.api.db.query(
      `INSERT INTO contact_identities (workspace_id, channel, address, contact_id, consent, verified, is_primary)
       SELECT $1, 'telegram', address, contact_id, 'opted_in', true, true FROM unnest($2::text[], $3::uuid[]) AS i (address, contact_id)`,
      { bind: [workspaceId, chats, contacts] },
    );
    await stack.api.db.query('INSERT INTO list_members (workspace_id, list_id, contact_id) SELECT $1, $2, unnest($3::uuid[])', { bind: [workspaceId, listId, contacts] });
    const sentToBot = () => telegram.requests.filter((request) => request.method === 'sendMessage' && request.token === bot.token).length;

    const id = ((await call('POST', '/campaigns', { name: 'Flash', listId, channel: 'telegram', text: 'Flash sale' })).body as { id: string }).id;
    expect(await sendNow(call, id)).toMatchObject({ status: 202, body: { recipients: 60 } });
    for (const deadline = Date.now() + 30_000; sentToBot() < 3 && Date.now() < deadline; ) await new Promise((resolve) => setTimeout(resolve, 50));
    expect(await call('POST', `/campaigns/${id}/cancel`)).toMatchObject({ status: 200, body: { status: 'canceled' } });

    const outcome = async () => {
      const rows = await stack.api.db.query<{ status: string; n: string }>(
        'SELECT status, count(*) AS n FROM messages WHERE workspace_id = $1 AND campaign_id = $2 GROUP BY status',
        { bind: [workspaceId, id], type: QueryTypes.SELECT },
      );
      return Object.fromEntries(rows.map((row) => [row.status, Number(row.n)]));
    };
    let statuses = await outcome();
    for (const deadline = Date.now() + 30_000; ((statuses.sending ?? 0) > 0 || (statuses.queued ?? 0) > 0) && Date.now() < deadline; statuses = await outcome()) {
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
    const canceled = (statuses.canceled ?? 0) + 60 - Object.values(statuses).reduce((sum, n) => sum + n, 0);
    expect(statuses.sent).toBeGreaterThanOrEqual(3);
    expect(statuses.sent).toBe(sentToBot());
    expect(canceled).toBe(60 - statuses.sent);
    const usage = (await call('GET', '/usage')).body as { messages: Body };
    expect(usage.messages).toMatchObject({ used: statuses.sent, byChannel: { email: 0, whatsapp: 0, telegram: statuses.sent } });
  });
});

describe('DELETE /campaigns/:id', () => {
  it('a draft → 204 and it is gone; a scheduled one → 409 conflict and it stays; another workspace\'s → 404', async () => {
    const { call, domain } = await createTestWorkspace(stack, { plan: 'pro', domain: true });
    const listId = await createList(call);
    const draft = ((await call('POST', '/campaigns', { name: 'Draft', listId, fromAddress: `a@${domain}`, subject: 'S', text: 'T' })).body as { id: string }).id;
    const other = await createTestWorkspace(stack, { plan: 'pro' });
    expect(await other.call('DELETE', `/campaigns/${draft}`)).toMatchObject({ status: 404, body: { error: 'not_found' } });
    expect((await call('GET', `/campaigns/${draft}`)).status).toBe(200);

    const deleted = await call('DELETE', `/campaigns/${draft}`);
    expect(deleted.status).toBe(204);
    expect(await call('GET', `/campaigns/${draft}`)).toMatchObject({ status: 404 });
    expect(await call('DELETE', `/campaigns/${draft}`)).toMatchObject({ status: 404 });

    const scheduled = ((await call('POST', '/campaigns', { name: 'Later', listId, fromAddress: `a@${domain}`, subject: 'S', text: 'T' })).body as { id: string }).id;
    const tomorrow = new Date(Date.now() + 86_400_000).toISOString();
    expect(await call('POST', `/campaigns/${scheduled}/send`, { scheduledAt: tomorrow })).toMatchObject({ status: 202, body: { status: 'scheduled' } });
    expect(await call('DELETE', `/campaigns/${scheduled}`)).toMatchObject({ status: 409, body: { error: 'conflict', message: expect.stringContaining('scheduled') } });
    expect(await call('GET', `/campaigns/${scheduled}`)).toMatchObject({ status: 200, body: { status: 'scheduled' } });
    expect(await call('POST', `/campaigns/${scheduled}/cancel`)).toMatchObject({ status: 200, body: { status: 'canceled' } });
    expect(await call('DELETE', `/campaigns/${scheduled}`)).toMatchObject({ status: 409 });
  });
});
