import { createHash, createHmac, hkdfSync, randomBytes, timingSafeEqual } from 'node:crypto';
import { z } from 'zod';
import type { InboundChat } from '../../core/delivery';

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

const SECRET_PREFIX = 'v2';
const NONCE_BYTES = 16;
const TAG_BYTES = 16;
/** 'v2' and base64url of 32 bytes: never the 43 characters of a version 1 secret (32 random bytes). */
const SECRET_LENGTH = SECRET_PREFIX.length + 43;

/** What a secret token header says about itself, before anything is read. */
export type SecretTokenCheck = 'signed' | 'forged' | 'unsigned';

export interface WebhookSecretTokens {
  /** A new `secret_token` for setWebhook of this workspace's bot. */
  generate: (workspaceId: string) => string;
  /**
   * `signed`: a version 2 token made for this workspace (still to be compared with the stored one, which a
   * new save replaces); `forged`: missing, or shaped as version 2 without a valid tag; `unsigned`: anything
   * else, which only a workspace still holding a version 1 secret may send.
   */
  check: (workspaceId: string, given: string | undefined) => SecretTokenCheck;
}

/**
 * The `secret_token` given to setWebhook (Telegram allows 1-256 characters of A-Z, a-z, 0-9, `_` and `-`).
 * Version 2 carries its own proof: a random nonce and an HMAC over the workspace id and the nonce (a key
 * derived from MASTER_KEY), so an update posted with a made-up token is refused before the workspace's
 * integration is read; anyone on the internet can post to the webhook URL. Version 1 tokens (32 random
 * bytes, before issue 29) prove nothing by themselves and are compared with the stored one after a read.
 */
export function webhookSecretTokens(masterKeys: readonly Buffer[]): WebhookSecretTokens {
  // Every key of the ring verifies (a rotation must not cut off a registered bot); the current one makes new secrets.
  const keys = masterKeys.map((masterKey) => Buffer.from(hkdfSync('sha256', masterKey, Buffer.alloc(0), 'messaging telegram webhook secret v2', 32)));
  if (keys.length === 0) throw new Error('webhook secret tokens need a key');
  const tag = (key: Buffer, workspaceId: string, nonce: Buffer) =>
    createHmac('sha256', key).update(workspaceId.toLowerCase()).update(nonce).digest().subarray(0, TAG_BYTES);
  return {
    generate(workspaceId) {
      const nonce = randomBytes(NONCE_BYTES);
      return `${SECRET_PREFIX}${Buffer.concat([nonce, tag(keys[0], workspaceId, nonce)]).toString('base64url')}`;
    },
    check(workspaceId, given) {
      if (!given) return 'forged';
      if (given.length !== SECRET_LENGTH || !given.startsWith(SECRET_PREFIX)) return 'unsigned';
      const encoded = given.slice(SECRET_PREFIX.length);
      const bytes = Buffer.from(encoded, 'base64url');
      if (bytes.length !== NONCE_BYTES + TAG_BYTES || bytes.toString('base64url') !== encoded) return 'forged';
      const presented = bytes.subarray(NONCE_BYTES);
      return keys.some((key) => timingSafeEqual(tag(key, workspaceId, bytes.subarray(0, NONCE_BYTES)), presented)) ? 'signed' : 'forged';
    },
  };
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
