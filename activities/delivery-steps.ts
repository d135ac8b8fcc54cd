import type { Sequelize } from 'sequelize';
import type { RetrySettings } from '../core/breaker';
import { createGroupBatcher } from '../core/group-batcher';
import { handBackToOutbox, type HandBackWait } from '../db/repositories/dispatch-queue';
import { claimDeliveries, type DeliveryClaim, recordSent, type SentReceipt } from '../db/repositories/message-delivery';
import { findMessagesToSend, type Message, type RenderedMessage, saveRendered } from '../db/repositories/messages';

/**
 * The database steps every delivery takes (read, store the render, claim, record), group-committed per
 * workspace across all the attempts this worker runs: under load one statement serves many messages, so a
 * batch of 500 costs a few dozen round trips per step instead of 500; an idle workspace's single send
 * still goes at once. Each message keeps its own claim and its own outcome.
 */
export function deliverySteps(db: Sequelize, claimLeaseMs: number, retry: RetrySettings) {
  const options = { maxBatch: 100, maxInFlight: 4 };
  const reads = createGroupBatcher<string, { message: Message; rendered: RenderedMessage | null } | null>(async (workspaceId, ids) => {
    const found = await findMessagesToSend(db, workspaceId, ids);
    return ids.map((id) => found.get(id) ?? null);
  }, options);
  const renders = createGroupBatcher<{ messageId: string; rendered: RenderedMessage }, void>(async (workspaceId, items) => {
    await saveRendered(db, workspaceId, items);
    return [];
  }, options);
  const claims = createGroupBatcher<{ messageId: string; claim: string }, DeliveryClaim>(
    (workspaceId, attempts) => claimDeliveries(db, workspaceId, attempts, claimLeaseMs),
    options,
  );
  const records = createGroupBatcher<SentReceipt, void>(async (workspaceId, receipts) => {
    await recordSent(db, workspaceId, receipts);
    return [];
  }, options);
  // A batch whose provider went down hands hundreds back at once: one statement for what arrives together.
  const handBacks = createGroupBatcher<{ messageId: string; wait: HandBackWait }, boolean>(async (workspaceId, items) => {
    const moved = new Set(await handBackToOutbox(db, workspaceId, items, retry));
    return items.map((item) => moved.has(item.messageId));
  }, options);
  return {
    read: (workspaceId: string, messageId: string) => reads.submit(workspaceId, messageId),
    handBack: (workspaceId: string, messageId: string, wait: HandBackWait) => handBacks.submit(workspaceId, { messageId, wait }),
    saveRender: (workspaceId: string, messageId: string, rendered: RenderedMessage) => renders.submit(workspaceId, { messageId, rendered }),
    claim: (workspaceId: string, messageId: string, claim: string) => claims.submit(workspaceId, { messageId, claim }),
    recordSent: (workspaceId: string, receipt: SentReceipt) => records.submit(workspaceId, receipt),
  };
}
