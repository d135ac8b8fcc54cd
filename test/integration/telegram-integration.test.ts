import { QueryTypes } from 'sequelize';
import { configKeyring } from '../../core/config';
import { openSecret } from '../../core/secrets';
import { findTelegramChat } from '../../db/repositories/telegram';
import { type ApiHarness, startApi } from '../helpers/api-harness';
import { createTestKey, createTestWorkspace } from '../helpers/workspaces';
import { type StandInBot, startTelegramStandIn, type TelegramStandIn } from '../helpers/telegram-stand-in';

const PUBLIC_BASE_URL = 'https://messaging.example';

interface IntegrationRow {
  bot_token_sealed: string;
  webhook_secret_sealed: string;
}

describe('the Telegram integration', () => {
  let api: ApiHarness;
  let telegram: TelegramStandIn;
  beforeAll(async () => {
    telegram = await startTelegramStandIn();
    api = await startApi({ RATE_LIMIT_PER_SECOND: '1000', PUBLIC_BASE_URL, TELEGRAM_API_URL: telegram.url });
  });
  afterAll(async () => {
    await api.close();
    await telegram.close();
  });

  async function workspace() {
    const created = await createTestWorkspace(api);
    return created;
  }

  async function connected(): Promise<{ workspaceId: string; bot: StandInBot; call: ReturnType<ApiHarness['as']> }> {
    const { workspaceId, call } = await workspace();
    const bot = telegram.addBot();
    expect((await call('PUT', '/integrations/telegram', { botToken: bot.token })).status).toBe(200);
    return { workspaceId, bot, call };
  }

  const sealedRow = async (workspaceId: string) =>
    (await api.db.query<IntegrationRow>('SELECT bot_token_sealed, webhook_secret_sealed FROM telegram_integrations WHERE workspace_id = $1', {
      bind: [workspaceId],
      type: QueryTypes.SELECT,
    }))[0];

  const privateMessage = (chatId: number, date: number) => ({
    update_id: date,
    message: { message_id: 1, date, from: { id: chatId, is_bot: false, first_name: 'Ann' }, chat: { id: chatId, type: 'private', username: 'ann', first_name: 'Ann' }, text: 'hello' },
  });

  it('a save checks the token, registers the webhook with a secret token, stores both sealed; reads never show the token', async () => {
    const { workspaceId, call } = await workspace();
    expect((await call('GET', '/integrations/telegram')).body).toEqual({ configured: false });
    const bot = telegram.addBot('acme_support_bot');

    const saved = await call('PUT', '/integrations/telegram', { botToken: bot.token });
    const webhookUrl = `${PUBLIC_BASE_URL}/callbacks/telegram/${workspaceId}`;
    const expected = { configured: true, botId: bot.id, botUsername: 'acme_support_bot', webhookUrl };
    expect(saved).toMatchObject({ status: 200, body: expected });
    expect((await call('GET', '/integrations/telegram')).body).toEqual(expected);

    const calls = telegram.requests.filter((request) => request.token === bot.token);
    expect(calls.map((request) => request.method)).toEqual(['getMe', 'setWebhook']);
    expect(calls[1].params).toMatchObject({ url: webhookUrl, secret_token: expect.stringMatching(/^v2[A-Za-z0-9_-]{43}$/) });
    expect(bot.webhook?.url).toBe(webhookUrl);

    const row = await sealedRow(workspaceId);
    const keyring = configKeyring(api.config);
    expect(row.bot_token_sealed).not.toContain(bot.token.split(':')[1]);
    expect(openSecret(keyring, { workspaceId, column: 'telegram_integrations.bot_token' }, row.bot_token_sealed)).toBe(bot.token);
    expect(row.webhook_secret_sealed).not.toContain(bot.webhook!.secretToken!);
    expect(openSecret(keyring, { workspaceId, column: 'telegram_integrations.webhook_secret' }, row.webhook_secret_sealed)).toBe(bot.webhook?.secretToken);
    expect(JSON.stringify(saved.body)).not.toContain(bot.token.split(':')[1]);
  });

  it('a delete unregisters the webhook and forgets the bot; a second delete answers 404', async () => {
    const { workspaceId, bot, call } = await connected();
    expect(await call('DELETE', '/integrations/telegram')).toMatchObject({ status: 200, body: { configured: false } });
    expect(telegram.requests.filter((request) => request.token === bot.token).at(-1)?.method).toBe('deleteWebhook');
    expect(bot.webhook).toBeNull();
    expect(await sealedRow(workspaceId)).toBeUndefined();
    expect((await call('GET', '/integrations/telegram')).body).toEqual({ configured: false });
    expect((await call('DELETE', '/integrations/telegram')).status).toBe(404);
  });

  it('a token Telegram refuses answers 422 naming botToken, and nothing is stored or registered', async () => {
    const { workspaceId, call } = await workspace();
    const unknown = `${telegram.addBot().id + 1_000_000}:AAHdqTcvCH1vGWJxfSeofSAs0K5PALDsaw`;
    const refused = await call('PUT', '/integrations/telegram', { botToken: unknown });
    expect(refused).toEqual(expect.objectContaining({ status: 422, body: { error: { formErrors: [], fieldErrors: { botToken: [expect.stringContaining('Unauthorized')] } } } }));
    expect(telegram.requests.filter((request) => request.token === unknown).map((request) => request.method)).toEqual(['getMe']);
    expect(await sealedRow(workspaceId)).toBeUndefined();
  });

  it('a token that is not shaped like one answers 422 before any call, so it cannot reach another path', async () => {
    const { call } = await workspace();
    const before = telegram.requests.length;
    for (const botToken of ['', 'abc', '123:../../getMe', '123:abcdefghijklmnopqrstuvwxyz/x', 42]) {
      const response = await call('PUT', '/integrations/telegram', { botToken });
      expect({ botToken, status: response.status }).toEqual({ botToken, status: 422 });
      expect(response.body).toEqual({ error: { formErrors: [], fieldErrors: { botToken: [expect.any(String)] } } });
    }
    expect(telegram.requests.length).toBe(before);
  });

  it('an unreachable Bot API answers 503 without echoing the token, and nothing is stored', async () => {
    const down = await startApi({ RATE_LIMIT_PER_SECOND: '1000', PUBLIC_BASE_URL, TELEGRAM_API_URL: 'http://127.0.0.1:1/' });
    try {
      const { workspaceId, apiKey } = await createTestWorkspace(down);
      const bot = telegram.addBot();
      const response = await down.as(apiKey)('PUT', '/integrations/telegram', { botToken: bot.token });
      expect(response).toMatchObject({ status: 503, body: { error: 'service_unavailable', message: 'The Telegram Bot API could not be reached; try again later' } });
      expect(JSON.stringify(response.body)).not.toContain(bot.token.split(':')[1]);
      expect(await sealedRow(workspaceId)).toBeUndefined();
      // The document names this answer and its body, so a client generated from it expects the 503.
      const document = (await down.call('GET', '/api/v1/openapi.json')).body as {
        paths: Record<string, Record<string, { responses: Record<string, { description: string; content?: Record<string, unknown> }> }>>;
      };
      const documented = document.paths['/api/v1/integrations/telegram'].put.responses['503'];
      expect(documented).toMatchObject({ description: expect.stringContaining('Telegram Bot API'), content: { 'application/json': expect.anything() } });
    } finally {
      await down.close();
    }
  });

  it('a webhook Telegram refuses (PUBLIC_BASE_URL not public https) answers 422 saying why, and nothing is stored', async () => {
    const { workspaceId, call } = await workspace();
    telegram.refuseNext('setWebhook', { errorCode: 400, description: 'Bad Request: bad webhook: An HTTPS URL must be provided for webhook' });
    const response = await call('PUT', '/integrations/telegram', { botToken: telegram.addBot().token });
    expect(response).toMatchObject({ status: 422, body: { error: { formErrors: [expect.stringContaining('An HTTPS URL must be provided')], fieldErrors: {} } } });
    expect(await sealedRow(workspaceId)).toBeUndefined();
  });

  it('saving again registers a new secret token: updates with the old one are refused from then on', async () => {
    const { bot, call } = await connected();
    const old = bot.webhook!.secretToken!;
    expect((await call('PUT', '/integrations/telegram', { botToken: bot.token })).status).toBe(200);
    expect(bot.webhook?.secretToken).not.toBe(old);
    expect(await telegram.deliverUpdate(bot, privateMessage(555_000_010, 1_764_000_000), { apiUrl: api.url, secretToken: old })).toBe(403);
    expect(await telegram.deliverUpdate(bot, privateMessage(555_000_010, 1_764_000_000), { apiUrl: api.url })).toBe(200);
  });

  it('a bot connected to one workspace answers 409 to another, whose save changes nothing at Telegram', async () => {
    const { bot } = await connected();
    const registered = bot.webhook;
    const other = await workspace();
    expect(await other.call('PUT', '/integrations/telegram', { botToken: bot.token })).toMatchObject({ status: 409, body: { error: 'conflict' } });
    expect(bot.webhook).toEqual(registered);
  });

  it('a key without integrations:write answers 403 on every Telegram integration route', async () => {
    const { workspaceId } = await createTestWorkspace(api);
    const { apiKey } = await createTestKey(api, workspaceId, ['messages:send', 'webhooks:write', 'contacts:write']);
    const call = api.as(apiKey);
    for (const [method, body] of [['PUT', { botToken: telegram.addBot().token }], ['GET', undefined], ['DELETE', undefined]] as const) {
      expect(await call(method, '/integrations/telegram', body)).toMatchObject({ status: 403, body: { error: 'forbidden', need: 'integrations:write' } });
    }
    expect(await sealedRow(workspaceId)).toBeUndefined();
  });

  it('an update with a wrong, missing or another workspace\'s secret token answers 403 and records nothing', async () => {
    const { workspaceId, bot } = await connected();
    const other = await connected();
    const update = privateMessage(555_000_001, 1_764_000_000);
    for (const secretToken of ['wrong', '', other.bot.webhook!.secretToken!]) {
      expect(await telegram.deliverUpdate(bot, update, { apiUrl: api.url, secretToken })).toBe(403);
    }
    const missing = await fetch(`${api.url}/callbacks/telegram/${workspaceId}`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(update) });
    expect(missing.status).toBe(403);
    for (const path of ['/callbacks/telegram/not-a-uuid', `/callbacks/telegram/${(await createTestWorkspace(api)).workspaceId}`]) {
      const response = await fetch(`${api.url}${path}`, { method: 'POST', headers: { 'content-type': 'application/json', 'x-telegram-bot-api-secret-token': bot.webhook!.secretToken! }, body: '{}' });
      expect({ path, status: response.status }).toEqual({ path, status: 403 });
    }
    expect(await findTelegramChat(api.db, workspaceId, '555000001')).toBeNull();
  });

  it('an update with the secret token answers 200 and records the chat; a later message moves its last inbound time', async () => {
    const { workspaceId, bot } = await connected();
    expect(await telegram.deliverUpdate(bot, privateMessage(555_000_002, 1_764_000_000), { apiUrl: api.url })).toBe(200);
    expect(await findTelegramChat(api.db, workspaceId, '555000002')).toEqual({
      chatId: '555000002',
      botId: String(bot.id),
      chatType: 'private',
      username: 'ann',
      firstName: 'Ann',
      title: null,
      firstInboundAt: new Date(1_764_000_000_000),
      lastInboundAt: new Date(1_764_000_000_000),
    });

    expect(await telegram.deliverUpdate(bot, privateMessage(555_000_002, 1_764_000_600), { apiUrl: api.url })).toBe(200);
    // A retried older update does not move it back.
    expect(await telegram.deliverUpdate(bot, privateMessage(555_000_002, 1_764_000_300), { apiUrl: api.url })).toBe(200);
    expect(await findTelegramChat(api.db, workspaceId, '555000002')).toMatchObject({
      firstInboundAt: new Date(1_764_000_000_000),
      lastInboundAt: new Date(1_764_000_600_000),
    });
    // Updates without a message are acknowledged, so Telegram does not retry them, and record nothing.
    expect(await telegram.deliverUpdate(bot, { update_id: 9, callback_query: { id: '1', from: { id: 555_000_003 } } }, { apiUrl: api.url })).toBe(200);
    expect(await findTelegramChat(api.db, workspaceId, '555000003')).toBeNull();
  });
});
