import { parseMailboxes } from './addresses';
import type { ChatRefusal } from './chat-refusals';
import { normaliseEmail } from './identities';

/**
 * The delivery vocabulary every provider (providers/*) maps into and the delivery path (activities/) speaks:
 * what a send hands over and gets back, how it fails, and what a provider tells afterwards. Nothing here
 * names a vendor, so a new provider is a new folder under providers/ and nothing else changes.
 */

export interface OutboundAttachment {
  filename: string;
  contentType: string;
  content: Buffer;
  /** Present for inline parts referenced from the HTML as cid:<contentId>. */
  contentId?: string;
}

export interface SendReceipt {
  provider: string;
  providerMessageId: string;
  /** Recipients the provider refused while we waited (SMTP RCPT or DATA replies): they bounce at once. */
  refused?: RefusedRecipient[];
}

/** One recipient refused at SMTP time, by its index among the message's to, cc and bcc addresses. */
export interface RefusedRecipient {
  address: string;
  recipientIndex: number;
  /** The SMTP reply, e.g. `550 5.1.1 <ann@example.org>: Recipient address rejected: User unknown`. */
  reply: string;
  responseCode: number;
  /** Whether the refusal may pass (a 4xx, or the connection lost after other recipients had it). */
  transient: boolean;
}

/** A provider refusal that retrying cannot fix (a 5xx from SMTP, a rejected message at SES). */
export class PermanentSendError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'PermanentSendError';
  }
}

/**
 * A permanent refusal that is the recipient's lasting state (core/chat-refusals.ts), as a chat channel
 * throws it. The chat delivery (chat-delivery.ts, `suppressingRefusals`) suppresses the recipient and passes
 * it on as a plain PermanentSendError, which fails the message: Temporal types a failure by its class name,
 * so this subclass must never leave the activity itself. `detail` is the provider's own words.
 */
export class RecipientRefusedError extends PermanentSendError {
  constructor(
    message: string,
    readonly suppress: NonNullable<ChatRefusal['suppress']>,
    readonly detail: string,
  ) {
    super(message);
  }
}

/**
 * The provider itself is not taking messages (connection refused, reset or timed out, SMTP 421, a throttling
 * answer, HTTP 429 or 5xx): not this message's fault, and the next message would fare no better. It counts
 * against the route's circuit breaker (docs/delivery.md "When a provider fails"); the message goes back to
 * the outbox unharmed.
 */
export class ProviderUnavailableError extends Error {
  /** How long the provider asked us to wait (Telegram's retry_after): the message is not tried before. */
  readonly retryAfterMs: number | null;

  constructor(message: string, options?: { cause?: unknown; retryAfterMs?: number }) {
    super(message, options);
    this.name = 'ProviderUnavailableError';
    this.retryAfterMs = options?.retryAfterMs ?? null;
  }
}

/** Socket-level failures: the provider's endpoint cannot be reached at all (refused, reset, timed out, no route). */
const CONNECTION_FAILURES = new Set(['ECONNREFUSED', 'ECONNRESET', 'ETIMEDOUT', 'EPIPE', 'EHOSTUNREACH', 'ENETUNREACH', 'EAI_AGAIN', 'UND_ERR_CONNECT_TIMEOUT', 'TimeoutError']);

export function isConnectionFailure(error: unknown): boolean {
  for (let current: unknown = error, depth = 0; current && depth < 4; depth += 1) {
    const { code, name, cause } = current as { code?: unknown; name?: unknown; cause?: unknown };
    if ((typeof code === 'string' && CONNECTION_FAILURES.has(code)) || (typeof name === 'string' && CONNECTION_FAILURES.has(name))) return true;
    current = cause;
  }
  return false;
}

/**
 * What a provider tells about an email after it left: SES notifications (providers/ses/notifications.ts)
 * and returned bounce and complaint reports (core/bounces/reports.ts) both say it this way.
 * `data`: what the event's source adds to the stored event (a DSN's status code and diagnostic, an ARF's feedback type).
 */
export type ProviderEvent =
  | { type: 'delivered'; providerMessageId: string; recipients: string[]; at: Date | null; data?: Record<string, unknown> }
  | { type: 'bounce'; providerMessageId: string; bounceType: 'hard' | 'soft'; detail: string; recipients: string[]; at: Date | null; data?: Record<string, unknown> }
  | { type: 'complaint'; providerMessageId: string; recipients: string[]; at: Date | null; data?: Record<string, unknown> }
  | { type: 'delivery_delayed'; providerMessageId: string; at: Date | null; data?: Record<string, unknown> };

/**
 * What a chat provider's status callback tells about a message it took (decisions: Unified messages). A
 * read receipt is a person opening the message, hence a human open.
 */
export type ChatStatusEvent = { type: 'sent' | 'delivered' | 'failed'; classification: null } | { type: 'open'; classification: 'human' };

/**
 * A chat message status in the vocabulary. The words are the ones chat providers share (Twilio's
 * MessageStatus, WhatsApp's own statuses: providers/twilio/callbacks.ts reads them); the mapping lives here
 * because a status parked before its message was known is replayed from storage (db/repositories/whatsapp.ts).
 * Intermediate statuses (`queued`, `accepted`, `sending`, …) are not events and map to null.
 */
export function chatStatusEvent(status: string): ChatStatusEvent | null {
  switch (status) {
    case 'sent':
      return { type: 'sent', classification: null };
    case 'delivered':
      return { type: 'delivered', classification: null };
    case 'read':
      return { type: 'open', classification: 'human' };
    case 'failed':
    case 'undelivered':
      return { type: 'failed', classification: null };
    default:
      return null;
  }
}

/** A chat that wrote to a workspace's bot, as the provider's update tells it (providers/telegram/updates.ts). */
export interface InboundChat {
  /** Canonical decimal form, as contact identities store a Telegram chat id. */
  chatId: string;
  chatType: string;
  username: string | null;
  firstName: string | null;
  title: string | null;
  at: Date;
  /** The provider's id of the message within its chat. */
  messageId: number;
  /** The message's text (a caption for media), if it has one. */
  text: string | null;
  /** An edit of an earlier message rather than a new one. */
  edited: boolean;
}

/**
 * Splits the recipients a bounce or complaint names into those the message was sent to (to, cc or bcc,
 * stored as formatted mailboxes like `Ann <ann@x.org>`) and the others. Only the first may be suppressed:
 * a mismatched or forged notification must not suppress addresses the message never went to. Addresses
 * compare case-insensitively, domains in their ASCII form.
 */
export function recipientsOfMessage(reported: readonly string[], messageRecipients: readonly string[]): { matched: string[]; foreign: string[] } {
  const sentTo = new Set(messageRecipients.flatMap(comparableAddresses));
  const matched: string[] = [];
  const foreign: string[] = [];
  for (const address of reported) {
    const comparable = comparableAddresses(address);
    (comparable.length > 0 && comparable.every((each) => sentTo.has(each)) ? matched : foreign).push(address);
  }
  return { matched, foreign };
}

function comparableAddresses(text: string): string[] {
  const parsed = parseMailboxes(text);
  if (!parsed.ok) return [];
  return parsed.mailboxes.flatMap((mailbox) => {
    const normalised = normaliseEmail(mailbox.address);
    return normalised.ok ? [normalised.address] : [];
  });
}
