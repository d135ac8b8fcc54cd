import nodemailer, { type Transporter } from 'nodemailer';
import { returnPathAddress, type ReturnPathTokens } from '../../core/bounces/return-path';
import type { RefusedRecipient, SendReceipt } from '../../core/delivery';
import type { EmailChannel, OutboundEmail } from '../email-channel';
import { envelopeRecipients } from '../mime';
import { inSendSpan } from '../send-span';
import { classifySmtpFailure } from './errors';

export interface SmtpError extends Error {
  responseCode?: number;
  response?: string;
  /** nodemailer: the command the reply answered (`MAIL FROM`, `RCPT TO`, `DATA`, `AUTH PLAIN`, `CONN`, ...). */
  command?: string;
  rejectedErrors?: Array<SmtpError & { recipient?: string }>;
}

/** Replies about a recipient (or this message to it), not about us or the connection. */
const RECIPIENT_COMMANDS = new Set(['RCPT TO', 'DATA']);

const replyOf = (error: SmtpError) => (error.response ?? error.message).trim();

/**
 * A pool keeps connections open between sends instead of a TLS handshake per message.
 * Bounded waits: a relay that stops answering must fail the attempt well inside the activity timeout.
 */
export function smtpTransport(url: string): Transporter {
  return nodemailer.createTransport({
    url,
    pool: true,
    maxConnections: 5,
    connectionTimeout: 10_000,
    greetingTimeout: 10_000,
    socketTimeout: 60_000,
  });
}

/** One SMTP transaction; its refused recipients by address, or the error that ended it. */
export async function smtpTransaction(transport: Transporter, from: string, to: string[], raw: Buffer): Promise<{ messageId: string | null; refused: Map<string, SmtpError> }> {
  const info = await transport.sendMail({ envelope: { from, to }, raw });
  const refused = new Map<string, SmtpError>();
  for (const error of (info as { rejectedErrors?: Array<SmtpError & { recipient?: string }> }).rejectedErrors ?? []) {
    if (error.recipient) refused.set(error.recipient, error);
  }
  return { messageId: info.messageId ? String(info.messageId) : null, refused };
}

/** The recipients an error refused, or null when it refused the sender or was no SMTP answer at all. */
export function refusedBy(error: SmtpError, to: string[]): Map<string, SmtpError> | null {
  if (!error.command || !RECIPIENT_COMMANDS.has(error.command) || error.responseCode === undefined) return null;
  if (error.command === 'RCPT TO' && error.rejectedErrors?.length) {
    return new Map(error.rejectedErrors.flatMap((each) => (each.recipient ? [[each.recipient, each] as const] : [])));
  }
  return new Map(to.map((address) => [address, error] as const));
}

export const refusal = (address: string, recipientIndex: number, error: SmtpError, lost = false): RefusedRecipient => ({
  address,
  recipientIndex,
  reply: replyOf(error),
  responseCode: error.responseCode ?? 0,
  transient: lost || (error.responseCode ?? 0) < 500,
});

export const receipt = (email: OutboundEmail, messageId: string | null, refused: RefusedRecipient[]): SendReceipt => ({
  provider: 'smtp',
  providerMessageId: messageId ?? `<${email.messageId}>`,
  ...(refused.length > 0 && { refused }),
});

/** The message in one transaction to every recipient (no return path): as before VERP. */
export async function sendTogether(transport: Transporter, email: OutboundEmail, raw: Buffer): Promise<SendReceipt> {
  const to = envelopeRecipients(email);
  try {
    const { messageId, refused } = await smtpTransaction(transport, email.from.address, to, raw);
    return receipt(email, messageId, to.flatMap((address, index) => {
      const error = refused.get(address);
      return error ? [refusal(address, index, error)] : [];
    }));
  } catch (error) {
    const refused = refusedBy(error as SmtpError, to);
    const code = (error as SmtpError).responseCode ?? 0;
    // Every recipient refused for good at RCPT or DATA: the message was answered, and each of them bounces.
    if (refused && code >= 500 && [...refused.values()].every((each) => (each.responseCode ?? 0) >= 500)) {
      return receipt(email, null, to.flatMap((address, index) => {
        const each = refused.get(address);
        return each ? [refusal(address, index, each)] : [];
      }));
    }
    throw classifySmtpFailure(error);
  }
}

/**
 * One transaction per recipient, each with its own return path. Until one recipient has the message a
 * failure is the whole message's (retried when transient); after that, a recipient whose transaction
 * fails is refused on the receipt, since a retry would send the others their copy again.
 */
export async function sendApart(transport: Transporter, email: OutboundEmail, raw: Buffer, domain: string, tokens: ReturnPathTokens): Promise<SendReceipt> {
  const to = envelopeRecipients(email);
  const refused: RefusedRecipient[] = [];
  let accepted = 0;
  let messageId: string | null = null;
  for (const [index, address] of to.entries()) {
    const from = returnPathAddress(tokens.sign({ messageId: email.messageId, recipientIndex: index }), domain);
    try {
      const result = await smtpTransaction(transport, from, [address], raw);
      const error = result.refused.get(address);
      if (error) refused.push(refusal(address, index, error));
      else accepted += 1;
      messageId ??= result.messageId;
    } catch (caught) {
      const error = caught as SmtpError;
      const mine = refusedBy(error, [address])?.get(address);
      if (mine && (mine.responseCode ?? 0) >= 500) refused.push(refusal(address, index, mine));
      else if (accepted > 0) refused.push(refusal(address, index, mine ?? error, !mine));
      // Nobody has it yet: the whole message is retried (4xx, a lost connection) or failed (the sender refused).
      else throw classifySmtpFailure(error);
    }
  }
  return receipt(email, messageId, refused);
}

/**
 * Any SMTP relay (locally: the mail catcher). SMTP has no idempotency key, so the message id travels in
 * the Message-ID header and the send activity skips messages that already have a provider id.
 *
 * With `returnPaths`, and a return-path domain on the email, each recipient gets an envelope of its own
 * whose sender is a VERP address naming the message and that recipient (core/bounces/return-path.ts):
 * a bounce that comes back later says whom it is about without being trusted to, and no recipient's
 * server sees a token naming another. Refusals while we wait (a 5xx or 4xx to RCPT TO or DATA) come back
 * on the receipt as `refused`; a refusal of the sender (MAIL FROM, AUTH) is the message's failure, never
 * its recipients' bounce.
 */
export function createSmtpChannel(url: string, returnPaths?: ReturnPathTokens): EmailChannel {
  const transport = smtpTransport(url);
  return {
    provider: 'smtp',
    // A relay accepts or refuses while we wait; what happens after (bounces) comes back as mail to the
    // return path (workflows/bounce-mail.ts), not as a callback.
    callsBack: false,
    async send(email: OutboundEmail, raw: Buffer): Promise<SendReceipt> {
      return inSendSpan({ provider: 'smtp', channel: 'email', messageId: email.messageId }, () =>
        returnPaths && email.returnPathDomain ? sendApart(transport, email, raw, email.returnPathDomain, returnPaths) : sendTogether(transport, email, raw));
    },
    async close() {
      transport.close();
    },
  };
}
