import { randomBytes, randomUUID } from 'node:crypto';
import { QueryTypes } from 'sequelize';
import { emailSuppress } from '../../activities/provider-events';
import { replayParkedEvents } from '../../db/repositories/provider-events';
import { newCustomerNumber, queueChatMessage } from '../helpers/chat-workspaces';
import { type ChatStack, PUBLIC_BASE_URL, startChatStack } from '../helpers/chat-stack';
import type { EmailStack } from '../helpers/email-stack';
import { createTestWorkspace } from '../helpers/workspaces';
import type { TelegramStandIn } from '../helpers/telegram-stand-in';
import type { Refusal, TwilioStandIn } from '../helpers/twilio-stand-in';

const CONTENT_SID = 'HX0123456789abcdef0123456789abcdef';

interface MessageView {
  status: string;
  events: Array<{ type: string; reason: string | null }>;
}

interface IdentityView {
  channel: string;
  address: string;
  consent: string;
  suppression?: { reason: string; detail: string | null; messageId: string | null };
}

describe('permanent chat refusals suppress the recipient (Telegram blocked or gone, Twilio permanent codes)', () => {
  let chat: ChatStack;
  let stack: EmailStack;
  let twilio: TwilioStandIn;
  let telegram: TelegramStandIn;

  beforeAll(async () => {
    chat = await startChatStack();
    ({ stack, twilio, telegram } = chat);
  });
  afterAll(() => chat?.close());

  const db = () => stack.api.db;
  const key = () => `refusal-${randomUUID()}`;
  const chatId = () => String(100_000 + Math.floor(Math.random() * 1_000_000_000));
  const callsTo = (chat: string) => telegram.requests.filter((request) => String(request.params.chat_id) === chat);

  /** A workspace with the integration, and a contact owning the address with consent, through the API. */
  async function contactFor(apiKey: string, channel: 'telegram' | 'whatsapp', address: string): Promise<string> {
    const created = await stack.api.as(apiKey)('POST', '/contacts', { identities: [{ channel, address, consent: 'opted_in' }] });
    expect(created.status).toBe(201);
    return (created.body as { id: string }).id;
  }

  async function messageOf(apiKey: string, id: string): Promise<MessageView> {
    const response = await stack.api.as(apiKey)('GET', `/messages/${id}`);
    expect(response.status).toBe(200);
    return response.body as MessageView;
  }

  async function identityOf(apiKey: string, contactId: string, channel: string): Promise<IdentityView | undefined> {
    const response = await stack.api.as(apiKey)('GET', `/contacts/${contactId}`);
    expect(response.status).toBe(200);
    return (response.body as { identities: IdentityView[] }).identities.find((identity) => identity.channel === channel);
  }

  async function suppressionsOf(apiKey: string, channel: string) {
    const response = await stack.api.as(apiKey)('GET', `/suppressions?channel=${channel}`);
    expect(response.status).toBe(200);
    return (response.body as { data: Array<{ address: string; reason: string; detail: string | null; messageId: string | null }> }).data;
  }

  const failedReason = (view: MessageView) => view.events.find((event) => event.type === 'failed')?.reason;

  describe('Telegram', () => {
    async function telegramWorkspace() {
      const workspace = await createTestWorkspace(stack, { telegram });
      const chat = chatId();
      const contactId = await contactFor(workspace.apiKey, 'telegram', chat);
      return { ...workspace, chat, contactId };
    }

    async function sendRefused(apiKey: string, workspaceId: string, chat: string, refusal: { errorCode: number; description: string }) {
      telegram.refuseNext('sendMessage', refusal);
      const accepted = await stack.api.as(apiKey)('POST', '/messages', { channel: 'telegram', to: chat, text: 'Your order shipped', idempotencyKey: key() });
      expect(accepted.status).toBe(202);
      const id = (accepted.body as { id: string }).id;
      expect(await stack.waitForStatus(workspaceId, id, ['sent', 'failed'])).toBe('failed');
      return id;
    }

    it.each([
      { errorCode: 403, description: 'Forbidden: bot was blocked by the user', reason: 'unsubscribed', consent: 'opted_out' },
      { errorCode: 403, description: 'Forbidden: bot was kicked from the group chat', reason: 'unsubscribed', consent: 'opted_out' },
      { errorCode: 403, description: 'Forbidden: user is deactivated', reason: 'hard_bounce', consent: 'opted_in' },
      { errorCode: 400, description: 'Bad Request: chat not found', reason: 'hard_bounce', consent: 'opted_in' },
    ])('$errorCode "$description" → failed with Telegram\'s words, the chat suppressed ($reason) on the list and the contact, the next message refused 409', async ({ errorCode, description, reason, consent }) => {
      const { workspaceId, apiKey, chat, contactId } = await telegramWorkspace();
      const id = await sendRefused(apiKey, workspaceId, chat, { errorCode, description });
      const said = `Telegram ${errorCode}: ${description}`;
      expect(failedReason(await messageOf(apiKey, id))).toContain(said);

      expect(await suppressionsOf(apiKey, 'telegram')).toEqual([expect.objectContaining({ address: chat, reason, detail: said, messageId: id })]);
      expect(await identityOf(apiKey, contactId, 'telegram')).toMatchObject({ consent, suppression: { reason, detail: said, messageId: id } });

      const calls = callsTo(chat).length;
      const next = await stack.api.as(apiKey)('POST', '/messages', { channel: 'telegram', to: chat, text: 'Again', idempotencyKey: key() });
      expect(next.status).toBe(409);
      expect(next.body).toMatchObject({ error: 'suppressed', droppedRecipients: [{ address: chat, reason }] });
      expect(callsTo(chat)).toHaveLength(calls);
    });

    it('a message that reaches delivery after the refusal (queued, not through acceptance) → failed with the chat in droppedRecipients; no Bot API call', async () => {
      const { workspaceId, apiKey, chat } = await telegramWorkspace();
      await sendRefused(apiKey, workspaceId, chat, { errorCode: 403, description: 'Forbidden: bot was blocked by the user' });
      const calls = callsTo(chat).length;
      const queued = await queueChatMessage(db(), workspaceId, { channel: 'telegram', to: chat, content: { text: 'queued before the refusal' } });
      expect(await stack.waitForStatus(workspaceId, queued, ['sent', 'failed'])).toBe('failed');
      expect(callsTo(chat)).toHaveLength(calls);
      const [failed] = await db().query<{ data: Record<string, unknown> }>(
        "SELECT data FROM message_events WHERE workspace_id = $1 AND message_id = $2 AND type = 'failed'",
        { bind: [workspaceId, queued], type: QueryTypes.SELECT },
      );
      expect(failed.data).toEqual({ droppedRecipients: [{ address: chat, reason: 'unsubscribed' }] });
    });

    it('401 (the bot token revoked) → the message fails, naming the token; nobody is suppressed and the next message is accepted', async () => {
      const { workspaceId, apiKey, chat, contactId } = await telegramWorkspace();
      const id = await sendRefused(apiKey, workspaceId, chat, { errorCode: 401, description: 'Unauthorized' });
      expect(failedReason(await messageOf(apiKey, id))).toMatch(/^Telegram 401: Unauthorized \(the bot token was refused/);
      expect(await suppressionsOf(apiKey, 'telegram')).toEqual([]);
      expect(await identityOf(apiKey, contactId, 'telegram')).toEqual(expect.not.objectContaining({ suppression: expect.anything() }));
      const next = await stack.api.as(apiKey)('POST', '/messages', { channel: 'telegram', to: chat, text: 'Again', idempotencyKey: key() });
      expect(next.status).toBe(202);
      expect(await stack.waitForStatus(workspaceId, (next.body as { id: string }).id, ['sent', 'failed'])).toBe('sent');
    });
  });

  describe('WhatsApp through Twilio', () => {
    async function whatsAppWorkspace() {
      const workspace = await createTestWorkspace(stack, { whatsapp: twilio });
      const customer = newCustomerNumber();
      const contactId = await contactFor(workspace.apiKey, 'whatsapp', customer);
      return { ...workspace, ...workspace.twilio, customer, contactId };
    }

    const sendTemplate = (apiKey: string, to: string) =>
      stack.api.as(apiKey)('POST', '/messages', { channel: 'whatsapp', to, contentSid: CONTENT_SID, idempotencyKey: key() });

    it.each([
      { refusal: 'invalid-number' as Refusal, code: 21211, reason: 'hard_bounce', consent: 'opted_in' },
      { refusal: 'not-mobile' as Refusal, code: 21614, reason: 'hard_bounce', consent: 'opted_in' },
      { refusal: 'unsubscribed' as Refusal, code: 21610, reason: 'unsubscribed', consent: 'opted_out' },
    ])('the send refused with $code → failed naming it, the number suppressed ($reason) on the list and the contact, the next message refused 409', async ({ refusal, code, reason, consent }) => {
      const { workspaceId, apiKey, customer, contactId } = await whatsAppWorkspace();
      twilio.refuse(`whatsapp:${customer}`, refusal);
      const accepted = await sendTemplate(apiKey, customer);
      expect(accepted.status).toBe(202);
      const id = (accepted.body as { id: string }).id;
      expect(await stack.waitForStatus(workspaceId, id, ['sent', 'failed'])).toBe('failed');
      expect(failedReason(await messageOf(apiKey, id))).toContain(`error ${code}`);
      expect(await suppressionsOf(apiKey, 'whatsapp')).toEqual([expect.objectContaining({ address: customer, reason, detail: expect.stringContaining(String(code)), messageId: id })]);
      expect(await identityOf(apiKey, contactId, 'whatsapp')).toMatchObject({ consent, suppression: { reason, messageId: id } });

      const sends = twilio.sends().length;
      const next = await sendTemplate(apiKey, customer);
      expect(next.status).toBe(409);
      expect(next.body).toMatchObject({ error: 'suppressed', droppedRecipients: [{ address: customer, reason }] });
      expect(twilio.sends()).toHaveLength(sends);
    });

    /** Sends a template (accepted by the stand-in) and answers the message id and its SID. */
    async function sentTemplate(apiKey: string, workspaceId: string, customer: string) {
      const accepted = await sendTemplate(apiKey, customer);
      const id = (accepted.body as { id: string }).id;
      expect(await stack.waitForStatus(workspaceId, id, ['sent', 'failed'])).toBe('sent');
      const [row] = await db().query<{ provider_message_id: string }>('SELECT provider_message_id FROM messages WHERE id = $1', { bind: [id], type: QueryTypes.SELECT });
      return { id, sid: row.provider_message_id };
    }

    async function statusCallback(workspaceId: string, authToken: string, sid: string, customer: string, params: Record<string, string>) {
      const path = `/callbacks/twilio/${workspaceId}/status`;
      const status = await twilio.callback({
        postTo: `${stack.api.url}${path}`,
        signedUrl: `${PUBLIC_BASE_URL}${path}`,
        authToken,
        params: { MessageSid: sid, To: `whatsapp:${customer}`, From: 'whatsapp:+14155552671', ...params },
      });
      expect(status).toBe(200);
    }

    it('a status callback "undelivered" with ErrorCode 21610 → failed with the meaning, the number suppressed as unsubscribed, the next message refused 409', async () => {
      const { workspaceId, apiKey, authToken, customer, contactId } = await whatsAppWorkspace();
      const { id, sid } = await sentTemplate(apiKey, workspaceId, customer);
      await statusCallback(workspaceId, authToken, sid, customer, { MessageStatus: 'undelivered', ErrorCode: '21610' });
      expect(await stack.waitForStatus(workspaceId, id, ['failed'])).toBe('failed');
      expect(failedReason(await messageOf(apiKey, id))).toBe('Twilio reported the message undelivered (error 21610): the recipient replied STOP and is unsubscribed');
      expect(await identityOf(apiKey, contactId, 'whatsapp')).toMatchObject({ consent: 'opted_out', suppression: { reason: 'unsubscribed', messageId: id } });
      // A retried callback changes nothing more.
      await statusCallback(workspaceId, authToken, sid, customer, { MessageStatus: 'undelivered', ErrorCode: '21610' });
      expect(await suppressionsOf(apiKey, 'whatsapp')).toHaveLength(1);
      expect((await sendTemplate(apiKey, customer)).status).toBe(409);
    });

    it('a status callback "failed" with ErrorCode 63016 (outside the 24-hour window) → failed naming the window, nobody suppressed, the next message accepted', async () => {
      const { workspaceId, apiKey, authToken, customer, contactId } = await whatsAppWorkspace();
      const { id, sid } = await sentTemplate(apiKey, workspaceId, customer);
      await statusCallback(workspaceId, authToken, sid, customer, { MessageStatus: 'failed', ErrorCode: '63016' });
      expect(await stack.waitForStatus(workspaceId, id, ['failed'])).toBe('failed');
      expect(failedReason(await messageOf(apiKey, id))).toMatch(/error 63016\): outside the 24-hour WhatsApp window/);
      expect(await suppressionsOf(apiKey, 'whatsapp')).toEqual([]);
      expect(await identityOf(apiKey, contactId, 'whatsapp')).toEqual(expect.not.objectContaining({ suppression: expect.anything() }));
      expect((await sendTemplate(apiKey, customer)).status).toBe(202);
    });

    it('a failed status for a SID not recorded yet keeps its ErrorCode while parked: replayed, it suppresses the number', async () => {
      const { workspaceId, authToken, customer } = await whatsAppWorkspace();
      const sid = `SM${randomBytes(16).toString('hex')}`;
      await stack.stopDispatcher();
      try {
        const id = await queueChatMessage(db(), workspaceId, { channel: 'whatsapp', to: customer, content: { contentSid: CONTENT_SID } });
        await db().query("UPDATE messages SET status = 'sending' WHERE id = $1", { bind: [id] });
        await statusCallback(workspaceId, authToken, sid, customer, { MessageStatus: 'undelivered', ErrorCode: '63003' });
        await db().query("UPDATE messages SET status = 'sent', provider = 'twilio', provider_message_id = $2 WHERE id = $1", { bind: [id, sid] });
        expect(await replayParkedEvents(db(), emailSuppress(db()), 'twilio', sid)).toBe(1);
        expect(await stack.waitForStatus(workspaceId, id, ['failed'])).toBe('failed');
      } finally {
        stack.startDispatcher();
      }
      const rows = await db().query<{ reason: string }>("SELECT reason FROM suppressions WHERE workspace_id = $1 AND channel = 'whatsapp' AND address = $2", {
        bind: [workspaceId, customer],
        type: QueryTypes.SELECT,
      });
      expect(rows).toEqual([{ reason: 'hard_bounce' }]);
    });
  });
});
