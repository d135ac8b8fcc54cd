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
 * Twilio's table lives here rather than in providers/twilio because its codes are also read back from
 * storage: a parked status's ErrorCode is interpreted when it is replayed (db/repositories/whatsapp.ts).
 * Telegram's refusals are read only as the Bot API answers, in providers/telegram/refusals.ts.
 *
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
