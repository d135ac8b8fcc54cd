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
