import { QueryTypes, type Sequelize, type Transaction } from 'sequelize';
import { normaliseAddress } from '../../core/identities';
import { withdrawConsent } from './contact-identities';
import { insertMessageEvent } from './message-events';
import { suppressAddresses } from './suppressions';

/** The timeline's name for it (decisions, "Message lifecycle"); webhooks call it `email.unsubscribed`. */
export const UNSUBSCRIBE_EVENT = 'unsubscribe';

/** `unknown-message`: the link is genuine but its message is gone (its workspace was deleted). */
export type UnsubscribeOutcome = 'unsubscribed' | 'already-unsubscribed' | 'unknown-message';

/** The `to` recipients (formatted) of an email message of the workspace, or null when it has no such message. */
export async function findEmailRecipients(db: Sequelize, workspaceId: string, messageId: string, transaction?: Transaction): Promise<string[] | null> {
  const rows = await db.query<{ to_addresses: string[] }>("SELECT to_addresses FROM messages WHERE workspace_id = $1 AND id = $2 AND channel = 'email'", {
    bind: [workspaceId, messageId],
    type: QueryTypes.SELECT,
    transaction,
  });
  return rows[0]?.to_addresses ?? null;
}

/**
 * A recipient unsubscribed through the link of one message, all in one transaction: the message's
 * `engagement.unsubscribed` flips and its `unsubscribe` event is stored, only the first time (the row lock
 * of the flip makes a concurrent second request find it flipped, so there is one event); the address is
 * suppressed with reason `unsubscribed` and the identity owning it marked `opted_out`. Those two are
 * repeated on a later request, where they change nothing unless someone lifted the suppression meanwhile:
 * then the person's own repeated request wins again.
 */
export async function recordUnsubscribe(db: Sequelize, workspaceId: string, messageId: string, address: string): Promise<UnsubscribeOutcome> {
  return db.transaction(async (transaction) => {
    const flipped = await db.query<{ id: string }>(
      `UPDATE messages SET unsubscribed = true, last_event_at = GREATEST(last_event_at, now()), updated_at = now()
       WHERE workspace_id = $1 AND id = $2 AND channel = 'email' AND NOT unsubscribed RETURNING id`,
      { bind: [workspaceId, messageId], type: QueryTypes.SELECT, transaction },
    );
    const first = flipped.length === 1;
    if (first) {
      await insertMessageEvent(db, workspaceId, messageId, { type: UNSUBSCRIBE_EVENT, data: { recipients: [address] } }, transaction);
    } else if (!(await findEmailRecipients(db, workspaceId, messageId, transaction))) {
      return 'unknown-message';
    }
    await suppressAddresses(db, workspaceId, 'email', [address], 'unsubscribed', transaction);
    const normalised = normaliseAddress('email', address);
    if (normalised.ok) await withdrawConsent(db, workspaceId, 'email', normalised.address, transaction);
    return first ? 'unsubscribed' : 'already-unsubscribed';
  });
}
