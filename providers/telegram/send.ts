import { TelegramError } from 'telegraf';
import { telegramRefusal } from './refusals';
import { type Keyring, openSecret } from '../../core/secrets';
import { isConnectionFailure, type OutboundAttachment, PermanentSendError, ProviderUnavailableError, RecipientRefusedError, type SendReceipt } from '../../core/delivery';
import { type BotApi, botApiRefusal, deadline } from './bot-api';
import { inSendSpan } from '../send-span';

/** A Telegram message ready to leave: the chat, the rendered text, the resolved attachments. */
export interface OutboundTelegramMessage {
  /** Our message id: the provider span's attribute (the delivery activity gives it); Telegram never sees it. */
  messageId?: string;
  /** A Bot API chat id in canonical decimal form (core/identities.ts). */
  chatId: string;
  /** Plain text, shown exactly as given (see `escapeHtml`). */
  text?: string;
  attachments: OutboundAttachment[];
}

/** The workspace's bot, as its integration stores it (read by the delivery activity, not here). */
export interface TelegramBot {
  workspaceId: string;
  /** The bot token, sealed under the workspace (core/secrets.ts). */
  botTokenSealed: string;
}

export interface TelegramChannelDeps {
  keyring: Keyring;
  /** A Bot API client for a token (TELEGRAM_API_URL). */
  botApi: (token: string) => BotApi;
}

/**
 * Where a multi-part send stands across attempts. Part 0 is the text (when there is one), then each
 * attachment in order. The Bot API has no idempotency key, so a part once sent is remembered (the delivery
 * path stores it, migration 0018) and a retry after a later part was throttled sends only what is left.
 */
export interface PartProgress {
  /** Parts an earlier attempt sent, by position: their `<chat_id>:<message_id>`. */
  sent: ReadonlyMap<number, string>;
  /** Records a part as soon as Telegram answers it, before the next part goes. */
  record(part: number, providerPartId: string): Promise<void>;
  /** Waits for the chat's next turn (1/s per chat) before each part after the first this attempt sends. */
  nextTurn(): Promise<void>;
}

const NO_PROGRESS: PartProgress = { sent: new Map(), record: async () => undefined, nextTurn: async () => undefined };

export interface TelegramChannel {
  readonly provider: 'telegram';
  /**
   * Sends the text, then each attachment, as the workspace's bot, skipping parts `progress` says were sent.
   * The receipt names the first message sent, as `<chat_id>:<message_id>` (a message id is only unique
   * within its chat).
   */
  send(integration: TelegramBot, message: OutboundTelegramMessage, progress?: PartProgress): Promise<SendReceipt>;
}

/** Uploads of up to 50 MB must fit; a send activity's own timeout bounds the whole send. */
const SEND_TIMEOUT_MS = 120_000;
/** What sendPhoto takes: JPEG, PNG or WebP up to 10 MB; anything else goes as a document (up to 50 MB). */
const PHOTO_TYPES = ['image/jpeg', 'image/png', 'image/webp'];
const PHOTO_MAX_BYTES = 10 * 1024 * 1024;

/**
 * The text is sent in HTML parse mode with `&`, `<` and `>` replaced by their entities, which is every
 * character Telegram's HTML parser gives a meaning to outside a tag. So a contact's name or any variable
 * shows exactly as written and can neither add a link or formatting nor make Telegram refuse the message
 * for markup it cannot parse; HTML mode (rather than none) leaves room for formatting the service itself adds.
 */
export function escapeHtml(text: string): string {
  return text.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;');
}

/**
 * telegraf writes the filename into the part's Content-Disposition between quotes without escaping it,
 * so a quote or a line break in a customer's filename would break the multipart body or add a header.
 */
function safeFilename(filename: string): string {
  return filename.replace(/["\\\r\n]/g, '_') || 'attachment';
}

/**
 * A refused call in the send path's terms. 429 (flood control), 5xx and an unreachable Bot API are the
 * bot's route being down: counted by its breaker, the message back in the outbox (docs/delivery.md);
 * every other refusal (400 chat not found, 403 bot blocked or kicked, 401 token revoked, 413 too large)
 * cannot succeed by retrying and fails the message. The refusals that are the recipient's lasting state
 * (blocked, kicked, deactivated, no such chat: ./refusals.ts) also suppress the chat; a 401 is the
 * bot's and suppresses nobody. Anything else (a timeout) is retried from the outbox.
 */
function sendFailure(error: unknown): unknown {
  const refusal = botApiRefusal(error);
  // 5xx (telegraf's TelegramError, which botApiRefusal leaves out) or no answer at all: the bot's route is down.
  if (!refusal) return error instanceof TelegramError || isConnectionFailure(error) ? new ProviderUnavailableError(`Telegram: ${(error as Error).message}`, { cause: error }) : error;
  // Flood control: the bot's route is throttled (its breaker counts it); the message waits what Telegram names.
  if (refusal.code === 429) {
    return new ProviderUnavailableError(`Telegram 429: ${refusal.description}`, { cause: error, retryAfterMs: (refusal.retryAfterSeconds ?? 1) * 1000 });
  }
  const said = `Telegram ${refusal.code}: ${refusal.description}`;
  const { meaning, suppress } = telegramRefusal(refusal.code, refusal.description);
  if (!suppress) return new PermanentSendError(`${said} (${meaning})`);
  return new RecipientRefusedError(`${said} (${meaning}); the chat is now suppressed on telegram (${suppress})`, suppress, said);
}

export function createTelegramChannel(deps: TelegramChannelDeps): TelegramChannel {
  async function sendAttachment(api: BotApi, chatId: string, attachment: OutboundAttachment) {
    const file = { source: attachment.content, filename: safeFilename(attachment.filename) };
    const asPhoto = PHOTO_TYPES.includes(attachment.contentType.toLowerCase()) && attachment.content.length <= PHOTO_MAX_BYTES;
    return asPhoto
      ? api.callApi('sendPhoto', { chat_id: chatId, photo: file }, deadline(SEND_TIMEOUT_MS))
      : api.callApi('sendDocument', { chat_id: chatId, document: file }, deadline(SEND_TIMEOUT_MS));
  }

  return {
    provider: 'telegram',
    send: (integration, message, progress = NO_PROGRESS) => inSendSpan({ provider: 'telegram', channel: 'telegram', messageId: message.messageId }, async () => {
      if (!message.text && message.attachments.length === 0) throw new PermanentSendError('a Telegram message needs a text or an attachment');
      const api = deps.botApi(openSecret(deps.keyring, { workspaceId: integration.workspaceId, column: 'telegram_integrations.bot_token' }, integration.botTokenSealed));
      const { text } = message;
      const parts: Array<() => Promise<{ message_id: number }>> = [
        ...(text ? [() => api.callApi('sendMessage', { chat_id: message.chatId, text: escapeHtml(text), parse_mode: 'HTML' }, deadline(SEND_TIMEOUT_MS))] : []),
        ...message.attachments.map((attachment) => () => sendAttachment(api, message.chatId, attachment)),
      ];
      const ids = new Map(progress.sent);
      let first = true;
      for (const [part, send] of parts.entries()) {
        if (ids.has(part)) continue;
        if (!first) await progress.nextTurn();
        first = false;
        let id: string;
        try {
          id = `${message.chatId}:${(await send()).message_id}`;
        } catch (error) {
          throw sendFailure(error);
        }
        ids.set(part, id);
        await progress.record(part, id);
      }
      return { provider: 'telegram', providerMessageId: ids.get(0) as string };
    }),
  };
}
