import type { ProviderEvent } from '../../core/ses-events';
import type { Mailbox } from '../../core/addresses';

/** An email ready to leave: rendered content, resolved attachments, and the headers the send decided. */
export interface OutboundEmail {
  /** Our message id: the provider idempotency key and the left part of the Message-ID header. */
  messageId: string;
  from: Mailbox;
  to: Mailbox[];
  cc: Mailbox[];
  bcc: Mailbox[];
  replyTo: Mailbox[];
  subject: string;
  html?: string;
  text?: string;
  headers: Record<string, string>;
  attachments: OutboundAttachment[];
  /**
   * Where bounces of this message are collected (a VERP return path per recipient on this domain: the
   * sending domain when it receives at our MX, or its bounce subdomain); null keeps the From address as
   * the envelope sender, for a domain whose return-path records are not published yet.
   */
  returnPathDomain?: string | null;
}

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

/** One adapter per provider (novu's shape): send, and, where the provider calls back, parse events. */
export interface EmailChannel {
  readonly provider: string;
  /** Whether this provider calls back (then `parseEvents` has something to parse). */
  readonly callsBack: boolean;
  send(email: OutboundEmail, raw: Buffer): Promise<SendReceipt>;
  /**
   * The provider's notification (the message of an SNS envelope whose signature and topic were checked)
   * in our event vocabulary; empty for a provider that does not call back.
   */
  parseEvents(notification: unknown): ProviderEvent[];
  close(): Promise<void>;
}

/** A provider refusal that retrying cannot fix (a 5xx from SMTP, a rejected message at SES). */
export class PermanentSendError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'PermanentSendError';
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
