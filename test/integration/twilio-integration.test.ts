import { randomBytes, randomUUID } from 'node:crypto';
import { QueryTypes } from 'sequelize';
import { configKeyring } from '../../core/config';
import { openSecret } from '../../core/secrets';
import { listMessageEvents } from '../../db/repositories/message-events';
import { recordSent } from '../../db/repositories/message-delivery';
import { findMessage } from '../../db/repositories/messages';
import { listPlatformEvents } from '../../db/repositories/platform-events';
import { insideServiceWindow } from '../../db/repositories/whatsapp';
import { type ApiHarness, startApi } from '../helpers/api-harness';
import { createTestKey, createTestWorkspace } from '../helpers/workspaces';
import { queueMessages } from '../helpers/factories';
import { startTwilioStandIn, type TwilioStandIn } from '../helpers/twilio-stand-in';

/** Twilio signs the public URL it was given; the API sits behind it on a local port. */
const PUBLIC_BASE_URL = 'https://messaging.example.com';
const SENDER = '+14155552671';

const accountSid = () => `AC${randomBytes(16).toString('hex')}`;
const messageSid = () => `SM${randomBytes(16).toString('hex')}`;

describe('Twilio integration and callbacks', () => {
  let api: ApiHarness;
  let twilio: TwilioStandIn;
  beforeAll(async () => {
    twilio = await startTwilioStandIn();
    api = await startApi({ RATE_LIMIT_PER_SECOND: '1000', TWILIO_API_URL: twilio.url, PUBLIC_BASE_URL });
  });
  afterAll(async () => {
    await api.close();
    await twilio.close();
  });

  /** A workspace whose Twilio account the stand-in knows, saved through the API. */
  async function configured() {
    const workspace = await createTestWorkspace(api);
    const credentials = { accountSid: accountSid(), authToken: randomBytes(16).toString('hex'), whatsappFrom: SENDER };
    twilio.addAccount(credentials.accountSid, credentials.authToken);
    const saved = await api.as(workspace.apiKey)('PUT', '/integrations/twilio', credentials);
    expect(saved.status).toBe(200);
    return { ...workspace, ...credentials, call: api.as(workspace.apiKey) };
  }

  const callbackPath = (workspaceId: string, kind: 'status' | 'inbound') => `/callbacks/twilio/${workspaceId}/${kind}`;
  const callback = (workspaceId: string, kind: 'status' | 'inbound', authToken: string, params: Record<string, string>, signature?: string) =>
    twilio.callback({
      postTo: `${api.url}${callbackPath(workspaceId, kind)}`,
      signedUrl: `${PUBLIC_BASE_URL}${callbackPath(workspaceId, kind)}`,
      authToken,
      params,
      signature,
    });

  /** A message Twilio accepted as `sid`, recorded as the send path records it. */
  async function twilioMessage(workspaceId: string, sid: string): Promise<string> {
    const [messageId] = await queueMessages(api.db, workspaceId, { kind: 'transactional', count: 1, from: SENDER });
    await api.db.query("UPDATE messages SET channel = 'whatsapp', status = 'sending' WHERE id = $1", { bind: [messageId] });
    await recordSent(api.db, workspaceId, [{ messageId, provider: 'twilio', providerMessageId: sid }]);
    return messageId;
  }

  it('save, read, delete → the token is checked against Twilio, stored sealed, and never answered', async () => {
    const { workspaceId, call, accountSid: sid, authToken } = await configured();
    const fetches = twilio.requests.filter((request) => request.method === 'GET' && request.path === `/2010-04-01/Accounts/${sid}.json`);
    expect(fetches).toEqual([expect.objectContaining({ username: sid })]);

    const read = await call('GET', '/integrations/twilio');
    expect(read).toMatchObject({ status: 200, body: { configured: true, accountSid: sid, whatsappFrom: SENDER } });
    expect(JSON.stringify(read.body)).not.toContain(authToken);

    const [row] = await api.db.query<{ auth_token_sealed: string }>('SELECT auth_token_sealed FROM twilio_integrations WHERE workspace_id = $1', {
      bind: [workspaceId],
      type: QueryTypes.SELECT,
    });
    expect(row.auth_token_sealed).not.toContain(authToken);
    expect(openSecret(configKeyring(api.config), { workspaceId, column: 'twilio_integrations.auth_token' }, row.auth_token_sealed)).toBe(authToken);

    expect(await call('DELETE', '/integrations/twilio')).toMatchObject({ status: 200, body: { configured: false } });
    expect(await call('GET', '/integrations/twilio')).toMatchObject({ status: 200, body: { configured: false } });
    expect((await call('DELETE', '/integrations/twilio')).status).toBe(404);
  });

  it('credentials Twilio refuses → 422 naming authToken, nothing saved', async () => {
    const { call } = await createTestWorkspace(api);
    const sid = accountSid();
    twilio.addAccount(sid, 'the-right-token');
    const refused = await call('PUT', '/integrations/twilio', { accountSid: sid, authToken: 'a-wrong-token', whatsappFrom: SENDER });
    expect(refused.status).toBe(422);
    expect(refused.body).toEqual({ error: { formErrors: [], fieldErrors: { authToken: [expect.stringContaining('401')] } } });
    expect((await call('GET', '/integrations/twilio')).body).toEqual({ configured: false });
  });

  it('a sender that is not a valid E.164 number → 422 naming whatsappFrom, Twilio not asked', async () => {
    const { apiKey } = await createTestWorkspace(api);
    const sid = accountSid();
    twilio.addAccount(sid, 'token');
    for (const whatsappFrom of ['4155552671', '+1415555', '+99912345678', 'whatsapp:+14155552671']) {
      const refused = await api.as(apiKey)('PUT', '/integrations/twilio', { accountSid: sid, authToken: 'token', whatsappFrom });
      expect({ whatsappFrom, status: refused.status }).toEqual({ whatsappFrom, status: 422 });
      expect(refused.body).toMatchObject({ error: { fieldErrors: { whatsappFrom: [expect.any(String)] } } });
    }
    expect(twilio.requests.some((request) => request.path.includes(sid))).toBe(false);
  });

  it('a key without integrations:write → 403 on save, read and delete', async () => {
    const { workspaceId } = await createTestWorkspace(api);
    const { apiKey } = await createTestKey(api, workspaceId, ['messages:send', 'webhooks:write']);
    for (const method of ['PUT', 'GET', 'DELETE']) {
      const response = await api.as(apiKey)(method, '/integrations/twilio', method === 'PUT' ? { accountSid: accountSid(), authToken: 't', whatsappFrom: SENDER } : undefined);
      expect({ method, status: response.status, body: response.body }).toEqual({ method, status: 403, body: { error: 'forbidden', need: 'integrations:write' } });
    }
  });

  it('a status callback with a bad signature → 403 and nothing stored', async () => {
    const { workspaceId, authToken } = await configured();
    const sid = messageSid();
    const messageId = await twilioMessage(workspaceId, sid);
    const params = { MessageSid: sid, MessageStatus: 'delivered', AccountSid: 'AC0' };

    expect(await callback(workspaceId, 'status', 'another-token', params)).toBe(403);
    expect(await callback(workspaceId, 'status', authToken, params, 'bm90IGEgc2lnbmF0dXJl')).toBe(403);
    expect(await callback(workspaceId, 'status', authToken, params, '')).toBe(403);
    // Signed right, but over another URL than the public one Twilio was given.
    expect(await twilio.callback({ postTo: `${api.url}${callbackPath(workspaceId, 'status')}`, signedUrl: `${api.url}${callbackPath(workspaceId, 'status')}`, authToken, params })).toBe(403);
    // A workspace without Twilio, or no workspace at all, is refused the same way.
    expect(await callback(randomUUID(), 'status', authToken, params)).toBe(403);
    expect(await callback('not-a-workspace', 'status', authToken, params)).toBe(403);

    expect((await listMessageEvents(api.db, workspaceId, messageId)).map((event) => event.type)).toEqual(['sent']);
    expect((await findMessage(api.db, workspaceId, messageId))?.status).toBe('sent');
  });

  it('delivered and read callbacks → delivered and a human open, stored once however often Twilio repeats them', async () => {
    const { workspaceId, authToken } = await configured();
    const sid = messageSid();
    const messageId = await twilioMessage(workspaceId, sid);
    for (const status of ['sent', 'delivered', 'read', 'read']) {
      expect(await callback(workspaceId, 'status', authToken, { MessageSid: sid, MessageStatus: status, ChannelPrefix: 'whatsapp' })).toBe(200);
    }
    const events = await listMessageEvents(api.db, workspaceId, messageId);
    expect(events.map(({ type, classification }) => ({ type, classification }))).toEqual([
      { type: 'sent', classification: null },
      { type: 'delivered', classification: null },
      { type: 'open', classification: 'human' },
    ]);
    const message = await findMessage(api.db, workspaceId, messageId);
    expect(message).toMatchObject({ status: 'delivered', engagement: { opensHuman: 1 } });
  });

  it('failed and undelivered callbacks → a failed event and a failed message', async () => {
    const { workspaceId, authToken } = await configured();
    for (const status of ['failed', 'undelivered']) {
      const sid = messageSid();
      const messageId = await twilioMessage(workspaceId, sid);
      expect(await callback(workspaceId, 'status', authToken, { MessageSid: sid, MessageStatus: status, ErrorCode: '63016' })).toBe(200);
      expect((await listMessageEvents(api.db, workspaceId, messageId)).map((event) => event.type)).toEqual(['sent', 'failed']);
      expect((await findMessage(api.db, workspaceId, messageId))?.status).toBe('failed');
    }
  });

  it('a signed status callback naming another workspace\'s message → nothing stored on it', async () => {
    const owner = await configured();
    const other = await configured();
    const sid = messageSid();
    const messageId = await twilioMessage(owner.workspaceId, sid);
    expect(await callback(other.workspaceId, 'status', other.authToken, { MessageSid: sid, MessageStatus: 'delivered' })).toBe(200);
    expect((await findMessage(api.db, owner.workspaceId, messageId))?.status).toBe('sent');
  });

  it('a signed inbound message → opens the sender\'s 24-hour window; a bad signature does not', async () => {
    const { workspaceId, authToken } = await configured();
    const customer = '+14155550199';
    const inbound = { MessageSid: messageSid(), From: `whatsapp:${customer}`, To: `whatsapp:${SENDER}`, Body: 'Hello' };
    expect(await callback(workspaceId, 'inbound', 'wrong-token', inbound)).toBe(403);
    expect(await insideServiceWindow(api.db, workspaceId, customer, new Date())).toBe(false);

    expect(await callback(workspaceId, 'inbound', authToken, inbound)).toBe(200);
    const now = new Date();
    expect(await insideServiceWindow(api.db, workspaceId, customer, now)).toBe(true);
    expect(await insideServiceWindow(api.db, workspaceId, customer, new Date(now.getTime() + 23 * 60 * 60 * 1000))).toBe(true);
    expect(await insideServiceWindow(api.db, workspaceId, customer, new Date(now.getTime() + 25 * 60 * 60 * 1000))).toBe(false);
  });

  it('an inbound message Twilio delivers twice (a retried callback) → one message.received event, so one webhook', async () => {
    const { workspaceId, authToken } = await configured();
    const inbound = { MessageSid: messageSid(), From: 'whatsapp:+14155550142', To: `whatsapp:${SENDER}`, Body: 'Where is my order?' };
    const second = { ...inbound, MessageSid: messageSid(), Body: 'Still waiting' };
    for (const params of [inbound, inbound, second]) expect(await callback(workspaceId, 'inbound', authToken, params)).toBe(200);
    const received = (await listPlatformEvents(api.db, workspaceId)).filter((event) => event.type === 'message.received');
    expect(received.map((event) => event.data.text)).toEqual(['Where is my order?', 'Still waiting']);
  });
});
