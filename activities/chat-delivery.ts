import type { Sequelize } from 'sequelize';
import { type Channel } from '../core/identities';
import { isRenderedChat, type RenderedChat } from '../core/message-content';
import { failMessage } from '../db/repositories/message-delivery';
import type { Message, RenderedMessage } from '../db/repositories/messages';
import { findSuppressed, suppressRefusedRecipient } from '../db/repositories/suppressions';
import { PermanentSendError, RecipientRefusedError, type SendReceipt } from '../core/delivery';
import type { SendObserver } from './send-observer';

/** A chat render, or the fault of ours it would be to find another channel's on a chat message. */
export function chatRenderOf(message: Message, rendered: RenderedMessage): RenderedChat {
  if (!isRenderedChat(rendered) || rendered.channel !== message.channel) throw new PermanentSendError(`a ${message.channel} message holds another channel's render`);
  return rendered;
}

/**
 * A chat message has one recipient (a phone number or a chat id). Suppressed since acceptance (a backlog
 * may wait hours; the person may have opted out meanwhile), it is not sent: it ends `failed` with the
 * recipient in `droppedRecipients`, and the caller answers null. Otherwise the recipient.
 */
export async function unsuppressedRecipient(db: Sequelize, observer: SendObserver, channel: Channel, message: Message): Promise<string | null> {
  const to = message.to[0];
  if (!to) throw new PermanentSendError('the message has no recipient');
  const reason = (await findSuppressed(db, message.workspaceId, channel, [to])).get(to);
  if (!reason) return to;
  observer.suppressedAtDelivery(message.workspaceId, message.id, 1, true);
  await failMessage(db, message.workspaceId, message.id, `suppressed: ${to} was suppressed on ${channel} after acceptance`, {
    droppedRecipients: [{ address: to, reason }],
  });
  return null;
}

/**
 * The provider call of a chat message, with the recipient suppressed when the provider refuses them for
 * good (a blocked bot, a STOP reply, a number that does not exist: core/chat-refusals.ts), so the next
 * message to them is refused at acceptance or dropped at delivery instead of being tried and refused again.
 * The suppression is written before the refusal goes on to fail the message: should the failure not be
 * recorded, the next attempt finds the recipient suppressed and fails it without calling the provider.
 */
export async function suppressingRefusals(db: Sequelize, channel: Channel, message: Message, send: () => Promise<SendReceipt>): Promise<SendReceipt> {
  try {
    return await send();
  } catch (error) {
    if (!(error instanceof RecipientRefusedError)) throw error;
    if (message.to[0]) {
      await suppressRefusedRecipient(db, message.workspaceId, {
        channel,
        address: message.to[0],
        reason: error.suppress,
        detail: error.detail,
        messageId: message.id,
      });
    }
    // Temporal names a failure by its class (constructor.name), and only `PermanentSendError` is
    // non-retryable (workflows/send-message.ts): the subclass would be retried, so it leaves as its base.
    throw new PermanentSendError(error.message);
  }
}
