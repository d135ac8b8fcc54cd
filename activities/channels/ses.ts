import { SESv2Client, SendEmailCommand, SESv2ServiceException } from '@aws-sdk/client-sesv2';
import { type EmailChannel, type OutboundEmail, PermanentSendError, type SendReceipt } from './email-channel';

/** SES answers that mean the message itself, the sender or the account will not be accepted as it is. */
const PERMANENT = new Set([
  'MessageRejected',
  'MailFromDomainNotVerifiedException',
  'AccountSuspendedException',
  'SendingPausedException',
  'BadRequestException',
  'NotFoundException',
]);

/**
 * SES v2 raw send. SES has no idempotency key; our message id goes in the Message-ID header and in an
 * email tag, so delivery and bounce notifications find their message.
 */
export function createSesChannel(client: SESv2Client = new SESv2Client({})): EmailChannel {
  return {
    provider: 'ses',
    async send(email: OutboundEmail, raw: Buffer): Promise<SendReceipt> {
      try {
        const answer = await client.send(
          new SendEmailCommand({
            FromEmailAddress: email.from.address,
            // Raw sends take recipients from the headers unless given; bcc is in no header, so all are given.
            Destination: {
              ToAddresses: email.to.map((mailbox) => mailbox.address),
              CcAddresses: email.cc.map((mailbox) => mailbox.address),
              BccAddresses: email.bcc.map((mailbox) => mailbox.address),
            },
            Content: { Raw: { Data: raw } },
            EmailTags: [{ Name: 'message_id', Value: email.messageId }],
          }),
        );
        if (!answer.MessageId) throw new Error('SES accepted the message without a MessageId');
        return { provider: 'ses', providerMessageId: answer.MessageId };
      } catch (error) {
        if (error instanceof SESv2ServiceException && PERMANENT.has(error.name)) {
          throw new PermanentSendError(`SES ${error.name}: ${error.message}`);
        }
        // Throttling (TooManyRequests, LimitExceeded) and transient faults: Temporal retries with backoff.
        throw error;
      }
    },
    async close() {
      client.destroy();
    },
  };
}

