import type { SuppressionReason } from './suppressions';

/**
 * What a chat provider's permanent refusal says about the recipient. `suppress` is the suppression reason
 * when the refusal is the recipient's own lasting state (they blocked the bot, replied STOP, the number or
 * chat does not exist), so nothing more is sent to them; null when it says nothing lasting about them (the
 * bot's token, the message's content, a window that reopens). `meaning` is shown in the message's reason.
 *
 * The suppression reasons are the closed list of core/suppressions.ts (decisions: hard bounces, complaints
 * and unsubscribes suppress): a recipient who left (blocked the bot, replied STOP) is `unsubscribed`; an
 * address that cannot receive (no such chat, deactivated account, not a mobile or WhatsApp number) is a
 * `hard_bounce`, the chat channels' equivalent of a 5.1.1. The provider's own words go on the message and in
 * the suppression's `detail`.
 */
export interface ChatRefusal {
  meaning: string;
  suppress: Extract<SuppressionReason, 'hard_bounce' | 'unsubscribed'> | null;
}

/**
 * Telegram Bot API refusals, told apart by their description (the API gives no finer code than 400/403):
 * the wording is the Bot API's own and stable for years. 401 (token revoked or wrong) is the bot's
 * failure, never the recipient's, and any refusal not listed suppresses nobody.
 */
const TELEGRAM_RECIPIENT_REFUSALS: ReadonlyArray<{ code: number; says: RegExp; refusal: ChatRefusal }> = [
  { code: 403, says: /bot was blocked by the user/i, refusal: { meaning: 'the user blocked the bot', suppress: 'unsubscribed' } },
  { code: 403, says: /bot was kicked from/i, refusal: { meaning: 'the bot was removed from the chat', suppress: 'unsubscribed' } },
  { code: 403, says: /bot is not a member of/i, refusal: { meaning: 'the bot is not a member of the chat', suppress: 'unsubscribed' } },
  { code: 403, says: /user is deactivated/i, refusal: { meaning: 'the user\'s Telegram account is deleted', suppress: 'hard_bounce' } },
  { code: 400, says: /chat not found/i, refusal: { meaning: 'no such chat', suppress: 'hard_bounce' } },
];

/** A permanent Bot API refusal (not 429, not 5xx) in the send path's terms. */
export function telegramRefusal(code: number, description: string): ChatRefusal {
  const known = TELEGRAM_RECIPIENT_REFUSALS.find((entry) => entry.code === code && entry.says.test(description));
  if (known) return known.refusal;
  if (code === 401) return { meaning: 'the bot token was refused (revoked or replaced): save the new one with PUT /integrations/telegram', suppress: null };
  return { meaning: 'Telegram refused the message', suppress: null };
}

/**
 * Twilio error codes that end a WhatsApp message for good, synchronous (the REST API's answer to the send)
 * or asynchronous (a `failed`/`undelivered` status callback's ErrorCode). From Twilio's error dictionary,
 * https://www.twilio.com/docs/api/errors/<code>, and its WhatsApp error-code mapping
 * (https://www.twilio.com/docs/whatsapp/api/error-code-mapping). Codes not listed fail the message without
 * suppressing anyone.
 */
export const TWILIO_ERRORS: Readonly<Record<number, ChatRefusal>> = {
  21211: { meaning: 'invalid \'To\' phone number', suppress: 'hard_bounce' },
  21614: { meaning: '\'To\' is not a valid mobile number', suppress: 'hard_bounce' },
  // 21610: the recipient replied STOP (or another opt-out keyword); Twilio blocks every send until START.
  21610: { meaning: 'the recipient replied STOP and is unsubscribed', suppress: 'unsubscribed' },
  // WhatsApp 1006/1013/1021: the number is not on WhatsApp or no longer active.
  63003: { meaning: 'the channel could not find the \'To\' address (not on WhatsApp, or inactive)', suppress: 'hard_bounce' },
  // The recipient blocked the sender or withdrew consent in the channel.
  63014: { meaning: 'the recipient blocked messages from this sender', suppress: 'unsubscribed' },
  // WhatsApp 1002/1026: the recipient cannot receive this message (not a valid WhatsApp user).
  63024: { meaning: 'invalid message recipient', suppress: 'hard_bounce' },
  // WhatsApp 472: WhatsApp will not deliver to this user (they stopped the business's messages).
  63032: { meaning: 'WhatsApp will not deliver to this user (opted out of this business\'s messages)', suppress: 'unsubscribed' },
  // Not the recipient's lasting state: the 24-hour customer-service window reopens as soon as the contact
  // writes, and a content template may be sent meanwhile. Suppressing would block both for good.
  63016: { meaning: 'outside the 24-hour WhatsApp window: send a content template (contentSid), or wait until the customer writes', suppress: null },
};

/** The meaning of a Twilio error code, or null for a code this service does not interpret. */
export function twilioError(code: number | null): ChatRefusal | null {
  return code === null ? null : (TWILIO_ERRORS[code] ?? null);
}
