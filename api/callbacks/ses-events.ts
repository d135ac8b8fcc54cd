import type { Sequelize, Transaction } from 'sequelize';
import type { ProviderEvent } from '../../core/ses-events';
import { insertMessageEvent, touchEngagement } from '../../db/repositories/message-events';
import { findByProviderMessageId, type MessageStatus, moveStatus } from '../../db/repositories/messages';

export type Suppress = (
  workspaceId: string,
  addresses: string[],
  reason: 'hard_bounce' | 'complaint',
  transaction: Transaction,
) => Promise<void>;

/** Which statuses an event may move a message from, and to what. Later facts never undo earlier ones. */
const MOVES: Partial<Record<ProviderEvent['type'], { from: MessageStatus[]; to: MessageStatus }>> = {
  delivered: { from: ['sending', 'sent'], to: 'delivered' },
  complaint: { from: ['sending', 'sent', 'delivered'], to: 'complained' },
};

/**
 * Records one provider event on its message: the event (once per provider notification id), the
 * status move, the engagement summary, and the suppression of hard-bounced or complaining addresses,
 * all in one transaction. Returns false when no message has that provider id.
 */
export async function recordProviderEvent(
  db: Sequelize,
  suppress: Suppress,
  provider: string,
  notificationId: string,
  event: ProviderEvent,
): Promise<boolean> {
  const found = await findByProviderMessageId(db, provider, event.providerMessageId);
  if (!found) return false;
  const { workspaceId, messageId } = found;
  const at = event.at ?? new Date();
  await db.transaction(async (transaction) => {
    const stored = await insertMessageEvent(db, workspaceId, messageId, {
      type: event.type,
      bounceType: event.type === 'bounce' ? event.bounceType : null,
      reason: event.type === 'bounce' ? event.detail : null,
      providerEventId: notificationId,
      data: 'recipients' in event ? { recipients: event.recipients } : {},
      at,
    }, transaction);
    // A redelivered notification changes nothing the first one did not.
    if (!stored) return;
    const move = event.type === 'bounce' && event.bounceType === 'hard'
      ? { from: ['sending', 'sent', 'delivered'] as MessageStatus[], to: 'bounced' as const }
      : MOVES[event.type];
    if (move) await moveStatus(db, workspaceId, messageId, move.from, move.to, transaction);
    await touchEngagement(db, workspaceId, messageId, { bounced: event.type === 'bounce' && event.bounceType === 'hard', at }, transaction);
    if (event.type === 'bounce' && event.bounceType === 'hard') await suppress(workspaceId, event.recipients, 'hard_bounce', transaction);
    if (event.type === 'complaint') await suppress(workspaceId, event.recipients, 'complaint', transaction);
  });
  return true;
}
