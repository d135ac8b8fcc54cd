import nodemailer, { type Transporter } from 'nodemailer';
import { type EmailChannel, type OutboundEmail, type SendReceipt } from './email-channel';
import { classifySmtpFailure } from './smtp-errors';
import { envelopeRecipients } from './mime';

/**
 * Any SMTP relay (locally: the mail catcher). SMTP has no idempotency key, so the message id travels in
 * the Message-ID header and the send activity skips messages that already have a provider id.
 */
export function createSmtpChannel(url: string): EmailChannel {
  // A pool keeps connections open between sends instead of a TLS handshake per message.
  // Bounded waits: a relay that stops answering must fail the attempt well inside the activity timeout.
  const transport: Transporter = nodemailer.createTransport({
    url,
    pool: true,
    maxConnections: 5,
    connectionTimeout: 10_000,
    greetingTimeout: 10_000,
    socketTimeout: 60_000,
  });
  return {
    provider: 'smtp',
    callsBack: false,
    // A relay accepts or refuses while we wait; what happens after (bounces) comes back as mail, not a callback.
    parseEvents: () => [],
    async send(email: OutboundEmail, raw: Buffer): Promise<SendReceipt> {
      try {
        const info = await transport.sendMail({
          envelope: { from: email.from.address, to: envelopeRecipients(email) },
          raw,
        });
        return { provider: 'smtp', providerMessageId: String(info.messageId ?? email.messageId) };
      } catch (error) {
        // 5xx is the server's final answer; an unreachable or throttling relay is the provider's state; any other 4xx this message's.
        throw classifySmtpFailure(error);
      }
    },
    async close() {
      transport.close();
    },
  };
}
