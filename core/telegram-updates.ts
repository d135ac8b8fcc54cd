import { createHash, randomBytes, timingSafeEqual } from 'node:crypto';
import { z } from 'zod';

/** A chat that wrote to a workspace's bot, as an update tells it. */
export interface InboundChat {
  /** Canonical decimal form, as contact identities store a Telegram chat id. */
  chatId: string;
  chatType: string;
  username: string | null;
  firstName: string | null;
  title: string | null;
  at: Date;
  /** The Bot API's id of the message within its chat. */
  messageId: number;
  /** The message's text (a caption for media), if it has one. */
  text: string | null;
  /** An edit of an earlier message rather than a new one. */
  edited: boolean;
}

const Chat = z.object({
  id: z.number().int().refine((id) => id !== 0),
  type: z.string().min(1).max(32),
  username: z.string().max(256).optional(),
  first_name: z.string().max(256).optional(),
  title: z.string().max(256).optional(),
});

// Only what is read: Telegram adds fields to updates over time, and an unknown one must not drop the update.
const Message = z.object({
  chat: Chat,
  date: z.number().int().positive(),
  message_id: z.number().int().nonnegative().default(0),
  text: z.string().max(8192).optional().catch(undefined),
  caption: z.string().max(2048).optional().catch(undefined),
});
const MessageUpdate = z.object({ message: Message.optional(), edited_message: Message.optional() });

/**
 * The chat of an update that carries a message from a person or group, or null for the other kinds
 * (callback queries, membership changes, channel posts: none of them is a chat writing to the bot).
 */
export function inboundChatOf(update: unknown): InboundChat | null {
  const parsed = MessageUpdate.safeParse(update);
  if (!parsed.success) return null;
  const message = parsed.data.message ?? parsed.data.edited_message;
  if (!message) return null;
  const { chat } = message;
  return {
    chatId: String(chat.id),
    chatType: chat.type,
    username: chat.username ?? null,
    firstName: chat.first_name ?? null,
    title: chat.title ?? null,
    // Telegram's `date` is Unix seconds.
    at: new Date(message.date * 1000),
    messageId: message.message_id,
    text: message.text ?? message.caption ?? null,
    edited: !parsed.data.message,
  };
}

/**
 * The `secret_token` given to setWebhook: Telegram allows 1-256 characters of A-Z, a-z, 0-9, `_` and `-`,
 * which base64url of 32 random bytes (256 bits) is.
 */
export function generateWebhookSecretToken(): string {
  return randomBytes(32).toString('base64url');
}

/**
 * Whether an update's X-Telegram-Bot-Api-Secret-Token is the workspace's. Both sides are hashed first, so
 * the comparison is constant-time whatever the given header's length.
 */
export function secretTokenMatches(expected: string, given: string | undefined): boolean {
  if (given === undefined) return false;
  const digest = (value: string) => createHash('sha256').update(value, 'utf8').digest();
  return timingSafeEqual(digest(expected), digest(given));
}
