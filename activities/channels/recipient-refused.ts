import type { ChatRefusal } from '../../core/chat-refusals';
import { PermanentSendError } from './email-channel';

/**
 * A permanent refusal that is the recipient's lasting state (core/chat-refusals.ts): the message fails like
 * any PermanentSendError (its name stays `PermanentSendError`, so Temporal does not retry it and the batch
 * path fails it alone), and the chat delivery suppresses the recipient before passing it on
 * (chat-delivery.ts, `suppressingRefusals`). `detail` is the provider's own words.
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
