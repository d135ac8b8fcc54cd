import type { ChatRefusal } from '../../core/chat-refusals';

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
