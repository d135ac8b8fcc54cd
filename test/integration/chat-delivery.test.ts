import { randomBytes } from 'node:crypto';
import { QueryTypes } from 'sequelize';
import { emailSuppress } from '../../activities/provider-events';
import { recordSent } from '../../db/repositories/message-delivery';
import { replayParkedEvents } from '../../db/repositories/provider-events';
import {
  customerWrites,
  newCustomerNumber,
  queueChatMessage,
} from '../helpers/chat-workspaces';
import { type ChatStack, PUBLIC_BASE_URL, startChatStack } from '../helpers/chat-stack';
import type { EmailStack } from '../helpers/email-stack';
import { createTestWorkspace } from '../helpers/workspaces';
import type { TelegramStandIn } from '../helpers/telegram-stand-in';
import type { TwilioStandIn } from '../helpers/twilio-stand-in';


describe('WhatsApp and Telegram on the delivery path (dispatcher, send workflow, real twilio and telegraf clients)', () => {
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

  async function eventsOf(workspaceId: string, messageId: string) {
    return db().query<{ type: string; reason: string | null; data: Record<string, unknown> }>(
      'SELECT type, reason, data FROM message_events WHERE workspace_id = $1 AND message_id = $2 ORDER BY created_at, id',
      { bind: [workspaceId, messageId], type: QueryTypes.SELECT },
    );
  }

  async function whatsAppWorkspace() {
    const workspace = await createTestWorkspace(stack, { whatsapp: twilio });
    return { ...workspace, ...workspace.twilio };
  }

  it('WhatsApp text inside the 24-hour window → one Twilio send from the workspace number with a status callback; the message is sent with its SID', async () => {
    const { workspaceId, authToken } = await whatsAppWorkspace();
    const customer = newCustomerNumber();
    await customerWrites(stack.api, twilio, workspaceId, authToken, customer);
    const id = await queueChatMessage(db(), workspaceId, { channel: 'whatsapp', to: customer, content: { text: 'Your order has shipped' } });
    expect(await stack.waitForStatus(workspaceId, id, ['sent', 'failed'])).toBe('sent');
    const sends = twilio.sends().filter((request) => request.params.To === `whatsapp:${customer}`);
    expect(sends).toHaveLength(1);
    expect(sends[0].params).toMatchObject({ Body: 'Your order has shipped', StatusCallback: `${PUBLIC_BASE_URL}/callbacks/twilio/${workspaceId}/status` });
    const [row] = await db().query<{ provider: string; provider_message_id: string }>('SELECT provider, provider_message_id FROM messages WHERE id = $1', {
      bind: [id],
      type: QueryTypes.SELECT,
    });
    expect(row).toEqual({ provider: 'twilio', provider_message_id: expect.stringMatching(/^SM[0-9a-f]{32}$/) });
  });

  it('WhatsApp text outside the window → failed for good, naming the content template rule, nothing sent', async () => {
    const { workspaceId } = await whatsAppWorkspace();
    const customer = newCustomerNumber();
    const id = await queueChatMessage(db(), workspaceId, { channel: 'whatsapp', to: customer, content: { text: 'Hello' } });
    expect(await stack.waitForStatus(workspaceId, id, ['sent', 'failed'])).toBe('failed');
    expect(twilio.sends().filter((request) => request.params.To === `whatsapp:${customer}`)).toEqual([]);
    expect((await eventsOf(workspaceId, id)).map((event) => event.reason)).toEqual([expect.stringMatching(/content template/)]);
  });

  it('WhatsApp to a number Twilio calls invalid (21211) → failed at once with Twilio\'s error in the reason', async () => {
    const { workspaceId } = await whatsAppWorkspace();
    const customer = newCustomerNumber();
    twilio.refuse(`whatsapp:${customer}`, 'invalid-number');
    const id = await queueChatMessage(db(), workspaceId, { channel: 'whatsapp', to: customer, content: { contentSid: 'HX0123456789abcdef0123456789abcdef' } });
    expect(await stack.waitForStatus(workspaceId, id, ['sent', 'failed'])).toBe('failed');
    expect((await eventsOf(workspaceId, id))[0].reason).toMatch(/21211/);
  });

  it('a WhatsApp recipient suppressed after acceptance → failed with the number in droppedRecipients, nothing sent', async () => {
    const { workspaceId, apiKey } = await whatsAppWorkspace();
    const customer = newCustomerNumber();
    const id = await queueChatMessage(db(), workspaceId, { channel: 'whatsapp', to: customer, content: { contentSid: 'HX0123456789abcdef0123456789abcdef' } });
    expect((await stack.api.as(apiKey)('POST', '/suppressions', { address: customer, channel: 'whatsapp', reason: 'unsubscribed' })).status).toBe(201);
    // The dispatcher may have been quicker than the suppression: either way nothing is sent twice, and a
    // message still waiting is not sent at all.
    const status = await stack.waitForStatus(workspaceId, id, ['sent', 'failed']);
    if (status === 'failed') {
      expect(twilio.sends().filter((request) => request.params.To === `whatsapp:${customer}`)).toEqual([]);
      expect((await eventsOf(workspaceId, id))[0].data).toEqual({ droppedRecipients: [{ address: customer, reason: 'unsubscribed' }] });
    }
  });

  it('a Twilio status that arrives before its SID is recorded → parked, then recorded once the send records the SID', async () => {
    const { workspaceId, authToken } = await whatsAppWorkspace();
    const sid = `SM${randomBytes(16).toString('hex')}`;
    // Not dispatched: the test plays the delivery's part (record the SID, replay what is parked). The
    // dispatcher stops first: stopped after the queueing, it could still send the message (CI saw it), whose
    // own SID then left ours naming nothing.
    await stack.stopDispatcher();
    try {
      const id = await queueChatMessage(db(), workspaceId, { channel: 'whatsapp', to: newCustomerNumber(), content: { text: 'x' } });
      await db().query("UPDATE messages SET status = 'sending' WHERE id = $1", { bind: [id] });
      const path = `/callbacks/twilio/${workspaceId}/status`;
      const posted = await twilio.callback({
        postTo: `${stack.api.url}${path}`,
        signedUrl: `${PUBLIC_BASE_URL}${path}`,
        authToken,
        params: { MessageSid: sid, MessageStatus: 'delivered', To: 'whatsapp:+14155550000', From: 'whatsapp:+14155552671' },
      });
      expect(posted).toBe(200);
      const parked = await db().query('SELECT 1 FROM parked_provider_events WHERE provider = $1 AND provider_message_id = $2', { bind: ['twilio', sid], type: QueryTypes.SELECT });
      expect(parked).toHaveLength(1);
      await recordSent(db(), workspaceId, [{ messageId: id, provider: 'twilio', providerMessageId: sid }]);
      expect(await replayParkedEvents(db(), emailSuppress(db()), 'twilio', sid)).toBe(1);
      expect((await eventsOf(workspaceId, id)).map((event) => event.type).sort()).toEqual(['delivered', 'sent']);
      expect(await stack.waitForStatus(workspaceId, id, ['delivered'])).toBe('delivered');
    } finally {
      stack.startDispatcher();
    }
  });

  async function telegramWorkspace() {
    return createTestWorkspace(stack, { telegram });
  }

  const chatId = () => String(100_000 + Math.floor(Math.random() * 1_000_000_000));
  const callsTo = (chat: string) => telegram.requests.filter((request) => String(request.params.chat_id) === chat);

  async function storedAttachment(apiKey: string, filename: string, content: Buffer): Promise<{ id: string; filename: string; contentType: string; size: number }> {
    const created = await stack.api.as(apiKey)('POST', '/attachments', { filename, content: content.toString('base64') });
    expect(created.status).toBe(201);
    const { attachment } = created.body as { attachment: { id: string; filename: string; contentType: string; size: number } };
    return { id: attachment.id, filename: attachment.filename, contentType: attachment.contentType, size: attachment.size };
  }

  it('Telegram text and a document → sendMessage (escaped HTML) then sendDocument, as the workspace\'s bot; the receipt names the text', async () => {
    const { workspaceId, apiKey, bot } = await telegramWorkspace();
    const chat = chatId();
    const file = await storedAttachment(apiKey, 'invoice.pdf', Buffer.from('%PDF-1.4 stand-in'));
    const id = await queueChatMessage(db(), workspaceId, { channel: 'telegram', to: chat, content: { text: 'Total <b>5 €</b> & more', attachments: [file] } });
    expect(await stack.waitForStatus(workspaceId, id, ['sent', 'failed'])).toBe('sent');
    const calls = callsTo(chat);
    expect(calls.map((call) => [call.method, call.token])).toEqual([['sendMessage', bot.token], ['sendDocument', bot.token]]);
    expect(calls[0].params).toMatchObject({ text: 'Total &lt;b&gt;5 €&lt;/b&gt; &amp; more', parse_mode: 'HTML' });
    expect(calls[1].files.document).toMatchObject({ filename: 'invoice.pdf' });
  });

  it('Telegram: a later part throttled (429) → retried after retry_after, and the part already sent is not sent again', async () => {
    const { workspaceId, apiKey } = await telegramWorkspace();
    const chat = chatId();
    const file = await storedAttachment(apiKey, 'notes.txt', Buffer.from('notes'));
    telegram.refuseNext('sendDocument', { errorCode: 429, description: 'Too Many Requests: retry after 1', retryAfter: 1 });
    const id = await queueChatMessage(db(), workspaceId, { channel: 'telegram', to: chat, content: { text: 'Here are your notes', attachments: [file] } });
    expect(await stack.waitForStatus(workspaceId, id, ['sent', 'failed'], 60_000)).toBe('sent');
    const methods = callsTo(chat).map((call) => call.method);
    expect(methods.filter((method) => method === 'sendMessage')).toHaveLength(1);
    expect(methods.filter((method) => method === 'sendDocument').length).toBeGreaterThanOrEqual(1);
    const parts = await db().query<{ part: number }>('SELECT part FROM message_parts WHERE message_id = $1 ORDER BY part', { bind: [id], type: QueryTypes.SELECT });
    expect(parts.map((row) => row.part)).toEqual([0, 1]);
  });

  it('Telegram: three messages to one chat → each Bot API call at least a second after the previous one (1/s per chat)', async () => {
    const { workspaceId } = await telegramWorkspace();
    const chat = chatId();
    const ids = [];
    for (const text of ['one', 'two', 'three']) ids.push(await queueChatMessage(db(), workspaceId, { channel: 'telegram', to: chat, content: { text } }));
    for (const id of ids) expect(await stack.waitForStatus(workspaceId, id, ['sent', 'failed'], 60_000)).toBe('sent');
    const times = callsTo(chat).map((call) => call.at).sort((a, b) => a - b);
    expect(times).toHaveLength(3);
    // The pacer's slots are a second apart on Redis's clock. Each call goes when its worker's timer for the slot
    // fires, and a timer late by tens of ms on a loaded machine (two test files at a time) narrows the gap to the
    // next call by as much: 948 ms was seen. Unpaced, the three calls come within a few ms of each other.
    for (let i = 1; i < times.length; i += 1) expect(times[i] - times[i - 1]).toBeGreaterThanOrEqual(900);
  });

  it('a Telegram chat suppressed before delivery → failed with the chat in droppedRecipients; no Bot API call', async () => {
    const { workspaceId, apiKey } = await telegramWorkspace();
    const chat = chatId();
    expect((await stack.api.as(apiKey)('POST', '/suppressions', { address: chat, channel: 'telegram', reason: 'manual' })).status).toBe(201);
    const id = await queueChatMessage(db(), workspaceId, { channel: 'telegram', to: chat, content: { text: 'hello' } });
    expect(await stack.waitForStatus(workspaceId, id, ['sent', 'failed'])).toBe('failed');
    expect(callsTo(chat)).toEqual([]);
    expect((await eventsOf(workspaceId, id))[0].data).toEqual({ droppedRecipients: [{ address: chat, reason: 'manual' }] });
  });
});
