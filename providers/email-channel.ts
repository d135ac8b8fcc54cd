import type { Mailbox } from '../core/addresses';
import type { OutboundAttachment, SendReceipt } from '../core/delivery';

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

/**
 * What every email provider (providers/ses, providers/smtp) is to the delivery path: one is chosen at wiring
 * (activities/index.ts). A provider that calls back has its parser in its own folder, which the callback
 * route calls (providers/ses/notifications.ts); one that does not has its bounces come back as mail.
 */
export interface EmailChannel {
  readonly provider: string;
  /** Whether this provider calls back, so events that came before the send's record may be waiting for it. */
  readonly callsBack: boolean;
  send(email: OutboundEmail, raw: Buffer): Promise<SendReceipt>;
  close(): Promise<void>;
}
