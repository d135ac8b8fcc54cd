import { SendEmailCommand, SESv2ServiceException } from '@aws-sdk/client-sesv2';
import { isConnectionFailure, PermanentSendError, ProviderUnavailableError, type SendReceipt } from '../../core/delivery';
import type { EmailChannel, OutboundEmail } from '../email-channel';
import { inSendSpan } from '../send-span';
import type { SesClients } from './clients';

/** SES answers that mean the message itself, the sender or the account will not be accepted as it is. */
const PERMANENT = new Set([
  'MessageRejected',
  'MailFromDomainNotVerifiedException',
  'AccountSuspendedException',
  'SendingPausedException',
  'BadRequestException',
  'NotFoundException',
]);

const THROTTLING = new Set(['TooManyRequestsException', 'LimitExceededException', 'ThrottlingException']);
function sesUnavailable(error: unknown): boolean {
  if (error instanceof SESv2ServiceException) return THROTTLING.has(error.name) || error.$fault === 'server';
  return isConnectionFailure(error);
}

export interface SesChannelDeps {
  clients: SesClients;
  /** The SES region of the email's sending domain (its from address's domain), where its identity lives. */
  sendingRegion: (email: OutboundEmail) => Promise<string>;
}

/**
 * SES v2 raw send, through the client of the sending domain's region. SES has no idempotency key; our
 * message id goes in the Message-ID header and in an email tag, so delivery and bounce notifications find
 * their message.
 */
export function createSesChannel(deps: SesChannelDeps): EmailChannel {
  return {
    provider: 'ses',
    // Its notifications come over SNS to POST /callbacks/ses, read by ./notifications.ts.
    callsBack: true,
    send: (email: OutboundEmail, raw: Buffer): Promise<SendReceipt> => inSendSpan({ provider: 'ses', channel: 'email', messageId: email.messageId }, async () => {
      const client = deps.clients.forRegion(await deps.sendingRegion(email));
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
        // Throttling, SES's own faults and an unreachable endpoint are the provider's state (its breaker
        // counts them); anything else is retried from the outbox with backoff.
        if (sesUnavailable(error)) throw new ProviderUnavailableError(`SES: ${(error as Error).message}`, { cause: error });
        throw error;
      }
    }),
    async close() {
      deps.clients.destroy();
    },
  };
}

