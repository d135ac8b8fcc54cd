import type { Sequelize } from 'sequelize';
import { type AcceptanceFollowUp, acceptMessages, findAcceptedKey, IdempotencyKeyTaken } from '../../db/repositories/message-acceptance';
import type { DroppedRecipient, NewMessage } from '../../db/repositories/messages';
import { duplicateOf, type Quota, quotaRefusal, type SendOutcome } from './outcome';

/*
 * Every message becomes durable in services/acceptance/: transactional sends (email, chat, inbox mail) here;
 * campaign pages in campaign-page.ts and journey messages in journey-message.ts, whose writes differ on
 * purpose: a campaign reserves its audience's quota once at its snapshot and writes each page of up to
 * thousands of rows in one set-based statement guarded by its status; a journey message takes its id from
 * the enrollment and node and is written on the journey's clock. Neither has a caller's idempotency key to
 * answer, and both leave suppressed recipients out before they write.
 */

/** Where acceptances are written, and who hears of them. */
export interface AcceptanceWriter {
  db: Sequelize;
  /**
   * Nudges the dispatchers after a message is written (db/outbox-wake.ts), so it is handed to Temporal at
   * once rather than at the dispatcher's next poll; without one the poll still finds it.
   */
  wake?: () => void;
}

/** A message that passed its channel's checks, ready to be written: the last step of every acceptance. */
export interface ReadyMessage {
  message: NewMessage;
  /** The request hash a repeat of its key is compared with (bodyMismatch). */
  hash: string;
  dropped: DroppedRecipient[];
  /** Removes the files the send stored, when it is refused now; failing to must not change the answer. */
  discard?: () => Promise<unknown> | undefined;
}

const discarded = (ready: ReadyMessage) => ready.discard?.()?.catch(() => undefined);

/**
 * Writes one message: quota reserved, usage counted, key and row inserted in one statement
 * (db/repositories/message-acceptance.ts), with a caller's follow-up writes in the same statement. A
 * quota the message does not fit answers 402; a key another request took meanwhile answers as that
 * request did (duplicate).
 */
export async function writeOne(writer: AcceptanceWriter, workspaceId: string, quota: Quota, ready: ReadyMessage, followUp?: AcceptanceFollowUp): Promise<SendOutcome> {
  const { db } = writer;
  try {
    if ((await acceptMessages(db, workspaceId, quota, [ready.message], followUp)) !== null) {
      writer.wake?.();
      return { status: 'accepted', id: ready.message.id, droppedRecipients: ready.dropped };
    }
    await discarded(ready);
    return { status: 'failed', error: await quotaRefusal(db, workspaceId, quota, ready.message.quotaUnits) };
  } catch (error) {
    if (!(error instanceof IdempotencyKeyTaken)) throw error;
    // A concurrent request with the same key committed first: answer as it did.
    await discarded(ready);
    const existing = await findAcceptedKey(db, workspaceId, ready.message.idempotencyKey);
    if (!existing) throw error;
    return duplicateOf(existing, ready.hash);
  }
}

/**
 * Writes ready messages of one workspace: all together in one statement when the quota covers them all
 * and no key was taken meanwhile (the usual case), else one by one in order, so each gets its own exact
 * answer. Outcomes are in the order of `ready`.
 */
export async function writeMessages(writer: AcceptanceWriter, workspaceId: string, quota: Quota, ready: readonly ReadyMessage[]): Promise<SendOutcome[]> {
  if (ready.length > 1) {
    try {
      const used = await acceptMessages(writer.db, workspaceId, quota, ready.map((item) => item.message));
      if (used !== null) {
        writer.wake?.();
        return ready.map((item) => ({ status: 'accepted', id: item.message.id, droppedRecipients: item.dropped }));
      }
    } catch (error) {
      if (!(error instanceof IdempotencyKeyTaken)) throw error;
    }
  }
  const outcomes: SendOutcome[] = [];
  for (const item of ready) outcomes.push(await writeOne(writer, workspaceId, quota, item));
  return outcomes;
}
