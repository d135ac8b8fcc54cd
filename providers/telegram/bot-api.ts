import { Telegram, TelegramError } from 'telegraf';

/**
 * The Bot API through telegraf's `Telegram` client, shared by the API (validating a token, the update
 * webhook) and the channel adapter (sends). Every call goes to TELEGRAM_API_URL and carries its own
 * deadline: telegraf's is 500 s, far past what an API request or a send activity may wait.
 */
export type BotApi = Pick<Telegram, 'callApi'>;

export function botApi(apiRoot: string, token: string): BotApi {
  return new Telegram(token, { apiRoot });
}

type CallOptions = NonNullable<Parameters<Telegram['callApi']>[2]>;

/**
 * Call options that abort the call after `ms`. telegraf types `signal` with the abort-controller
 * polyfill's classes, which Node's own AbortSignal does not match structurally; node-fetch 2, which
 * telegraf calls with it, accepts the native one (it checks the class name), hence the cast.
 */
export function deadline(ms: number): CallOptions {
  return { signal: AbortSignal.timeout(ms) as unknown as CallOptions['signal'] };
}

/**
 * A bot token as BotFather issues it: `<bot id>:<secret>`. Checked before any call, because the token
 * becomes part of the request path: a `/` or `..` in it would send the call to another path of the root.
 */
export const BOT_TOKEN = /^\d{1,20}:[A-Za-z0-9_-]{20,100}$/;

/** The Bot API's answer to a refused call (`ok: false`): its code and, for 429, the wait it asks for. */
export interface BotApiRefusal {
  code: number;
  description: string;
  retryAfterSeconds: number | undefined;
}

/** The refusal carried by a failed call, or null when the call failed otherwise (network, timeout, 5xx). */
export function botApiRefusal(error: unknown): BotApiRefusal | null {
  // telegraf also raises TelegramError for 5xx answers: those are the provider failing, not refusing.
  if (!(error instanceof TelegramError) || error.code >= 500) return null;
  return { code: error.code, description: error.description, retryAfterSeconds: error.parameters?.retry_after };
}
