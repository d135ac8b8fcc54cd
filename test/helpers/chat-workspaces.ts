import { randomBytes, randomUUID } from 'node:crypto';
import type { Sequelize } from 'sequelize';
import type { ChatContentInput } from '../../core/message-content';
import { periodKey, PLANS, usagePeriodAt } from '../../core/plans';
import { acceptMessages } from '../../db/repositories/message-acceptance';
import type { ApiHarness } from './api-harness';
import type { StandInBot, TelegramStandIn } from './telegram-stand-in';
import type { TwilioStandIn } from './twilio-stand-in';

/** The WhatsApp sender every test workspace saves. */
export const WHATSAPP_SENDER = '+14155552671';

let customers = 0;

/** A customer number no other test uses, so the stand-in's requests to it are one test's alone. */
export function newCustomerNumber(): string {
  customers += 1;
  return `+1415${String(5_000_000 + Math.floor(Math.random() * 4_000_000) + customers).padStart(7, '0')}`;
}

export interface TwilioAccount {
  accountSid: string;
  authToken: string;
}

/** Saves a Twilio account (known to the stand-in) as the workspace's integration, through the API. */
export async function connectTwilio(api: ApiHarness, twilio: TwilioStandIn, apiKey: string): Promise<TwilioAccount> {
  const accountSid = `AC${randomBytes(16).toString('hex')}`;
  const authToken = randomBytes(16).toString('hex');
  twilio.addAccount(accountSid, authToken);
  const saved = await api.as(apiKey)('PUT', '/integrations/twilio', { accountSid, authToken, whatsappFrom: WHATSAPP_SENDER });
  if (saved.status !== 200) throw new Error(`Twilio save answered ${saved.status}`);
  return { accountSid, authToken };
}

/** The customer writes to the workspace (a signed inbound callback): the 24-hour window opens. */
export async function customerWrites(api: ApiHarness, twilio: TwilioStandIn, workspaceId: string, authToken: string, customer: string): Promise<void> {
  const path = `/callbacks/twilio/${workspaceId}/inbound`;
  const params = { MessageSid: `SM${randomBytes(16).toString('hex')}`, From: `whatsapp:${customer}`, To: `whatsapp:${WHATSAPP_SENDER}`, Body: 'Hi' };
  const status = await twilio.callback({ postTo: `${api.url}${path}`, signedUrl: `${api.config.PUBLIC_BASE_URL}${path}`, authToken, params });
  if (status !== 200) throw new Error(`inbound callback answered ${status}`);
}

/** Saves a stand-in bot as the workspace's Telegram integration, through the API. */
export async function connectTelegram(api: ApiHarness, telegram: TelegramStandIn, apiKey: string): Promise<StandInBot> {
  const bot = telegram.addBot(`bot_${randomUUID().slice(0, 8)}_bot`);
  const saved = await api.as(apiKey)('PUT', '/integrations/telegram', { botToken: bot.token });
  if (saved.status !== 200) throw new Error(`Telegram save answered ${saved.status}`);
  return bot;
}

/** Accepts a chat message straight into the outbox (the delivery path's view of a POST /messages). */
export async function queueChatMessage(
  db: Sequelize,
  workspaceId: string,
  message: { channel: 'whatsapp' | 'telegram'; to: string; content: ChatContentInput },
): Promise<string> {
  const period = usagePeriodAt(new Date());
  const id = randomUUID();
  await acceptMessages(db, workspaceId, { plan: PLANS.pro, period }, [{
    id,
    kind: 'transactional',
    channel: message.channel,
    idempotencyKey: `chat-${id}`,
    requestHash: 'test',
    fromAddress: null,
    to: [message.to],
    cc: [],
    bcc: [],
    subject: null,
    content: message.content,
    templateId: null,
    quotaUnits: 1,
    quotaPeriod: periodKey(period),
    droppedRecipients: [],
  }]);
  return id;
}
