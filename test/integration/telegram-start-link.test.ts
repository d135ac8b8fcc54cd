import { QueryTypes } from 'sequelize';
import { type ApiHarness, startApi } from '../helpers/api-harness';
import { createTestWorkspace } from '../helpers/workspaces';
import { startTelegramStandIn, type TelegramStandIn } from '../helpers/telegram-stand-in';

const PUBLIC_BASE_URL = 'https://messaging.example.com';

describe('Telegram /start <token>: the contact link and inbound messages', () => {
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

  const update = (chatId: number, text: string, type = 'private') => ({
    update_id: chatId,
    message: { message_id: 7, date: Math.floor(Date.now() / 1000), chat: { id: chatId, type, first_name: 'Ann' }, text },
  });
  const chatId = () => 300_000 + Math.floor(Math.random() * 1_000_000_000);

  async function identities(workspaceId: string, contactId: string) {
    return api.db.query<{ address: string; consent: string; verified: boolean; is_primary: boolean }>(
      "SELECT address, consent, verified, is_primary FROM contact_identities WHERE workspace_id = $1 AND contact_id = $2 AND channel = 'telegram'",
      { bind: [workspaceId, contactId], type: QueryTypes.SELECT },
    );
  }

  it('the contact\'s link, opened and started in Telegram → a verified, opted-in, primary Telegram identity; /messages then picks Telegram', async () => {
    const { workspaceId, call, bot } = await createTestWorkspace(api, { telegram });
    const contactId = ((await call('POST', '/contacts', { attributes: { name: 'Ann' }, identities: [{ channel: 'email', address: `ann-${chatId()}@example.org` }] })).body as { id: string }).id;
    const link = await call('POST', `/contacts/${contactId}/telegram-link`);
    expect(link).toMatchObject({ status: 200, body: { url: expect.stringMatching(new RegExp(`^https://t\\.me/${bot.username}\\?start=[A-Za-z0-9_-]{50}$`)), botUsername: bot.username } });
    const { token } = link.body as { token: string };
    const chat = chatId();
    expect(await telegram.deliverUpdate(bot, update(chat, `/start ${token}`), { apiUrl: api.url })).toBe(200);
    expect(await identities(workspaceId, contactId)).toEqual([{ address: String(chat), consent: 'opted_in', verified: true, is_primary: true }]);
    expect(await call('POST', '/messages', { contactId, text: 'Linked', idempotencyKey: `link-${chat}` })).toMatchObject({ status: 202, body: { channel: 'telegram' } });
  });

  it('a token of another workspace, an altered one, or one from a group links nothing', async () => {
    const owner = await createTestWorkspace(api, { telegram });
    const { bot: otherBot } = await createTestWorkspace(api, { telegram });
    const ownBot = owner.bot;
    const contactId = ((await api.as(owner.apiKey)('POST', '/contacts', { identities: [{ channel: 'email', address: `b-${chatId()}@example.org` }] })).body as { id: string }).id;
    const { token } = (await api.as(owner.apiKey)('POST', `/contacts/${contactId}/telegram-link`)).body as { token: string };
    const altered = `${token.slice(0, 10)}${token[10] === 'A' ? 'B' : 'A'}${token.slice(11)}`;
    expect(await telegram.deliverUpdate(otherBot, update(chatId(), `/start ${token}`), { apiUrl: api.url })).toBe(200);
    expect(await telegram.deliverUpdate(ownBot, update(chatId(), `/start ${altered}`), { apiUrl: api.url })).toBe(200);
    expect(await telegram.deliverUpdate(ownBot, update(-chatId(), `/start ${token}`, 'group'), { apiUrl: api.url })).toBe(200);
    expect(await identities(owner.workspaceId, contactId)).toEqual([]);
  });

  it('another workspace\'s contact → 404; a workspace without a bot → 409', async () => {
    const owner = await createTestWorkspace(api);
    const contactId = ((await api.as(owner.apiKey)('POST', '/contacts', { identities: [{ channel: 'email', address: `c-${chatId()}@example.org` }] })).body as { id: string }).id;
    expect((await api.as(owner.apiKey)('POST', `/contacts/${contactId}/telegram-link`)).status).toBe(409);
    const intruder = await createTestWorkspace(api, { telegram });
    expect((await api.as(intruder.apiKey)('POST', `/contacts/${contactId}/telegram-link`)).status).toBe(404);
  });

  it('a customer\'s message → a message.received platform event with the chat and text; an edit adds none', async () => {
    const { workspaceId, bot } = await createTestWorkspace(api, { telegram });
    const chat = chatId();
    expect(await telegram.deliverUpdate(bot, update(chat, 'Where is my order?'), { apiUrl: api.url })).toBe(200);
    const edited = { update_id: 1, edited_message: update(chat, 'Where is my order??').message };
    expect(await telegram.deliverUpdate(bot, edited, { apiUrl: api.url })).toBe(200);
    const events = await api.db.query<{ type: string; data: Record<string, unknown> }>('SELECT type, data FROM platform_events WHERE workspace_id = $1', {
      bind: [workspaceId],
      type: QueryTypes.SELECT,
    });
    expect(events).toEqual([{ type: 'message.received', data: { channel: 'telegram', from: String(chat), text: 'Where is my order?', username: null, providerMessageId: `${chat}:7` } }]);
  });
});
