import type { ChatRefusal } from '../../core/chat-refusals';
import { PermanentSendError } from './email-channel';

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
