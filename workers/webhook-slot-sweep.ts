import type { Client } from '@temporalio/client';
import type { Sequelize } from 'sequelize';
import { inLanes } from '../core/lanes';
import { webhookDeliveryWorkflowId } from '../core/ids';
import { freeWebhookSlots, type HeldWebhookSlot, takeHeldWebhookSlots } from '../db/repositories/webhook-dispatch';
import { workflowVerdict } from '../temporal/workflow-status';

export interface WebhookSlotSweepOptions {
  /** Only deliveries dispatched (and last checked) longer ago than this are asked about. */
  olderThanMs: number;
  /** Deliveries asked about per round. */
  limit: number;
}

/** A minute: a workflow that starts runs its first attempt in seconds, so younger slots are not worth a question. */
export const WEBHOOK_SLOT_SWEEP: WebhookSlotSweepOptions = { olderThanMs: 60_000, limit: 10 };

const CONCURRENT_DESCRIBES = 4;

/**
 * One round of the sweep: a delivery's slot is held until its row leaves `pending` or its 48 h lease runs
 * out, so a workflow terminated in the Temporal UI (or lost with its history) would hold one of its
 * endpoint's few slots for two days. Asks Temporal about a handful of the longest-unchecked in-flight
 * deliveries and frees the slots of those whose workflow is closed or missing; the dispatcher starts them
 * again as new runs and the endpoint's next deliveries go. Answers how many were freed.
 */
export async function sweepWebhookSlots(db: Sequelize, client: Client, options: WebhookSlotSweepOptions = WEBHOOK_SLOT_SWEEP): Promise<number> {
  const held = await takeHeldWebhookSlots(db, options);
  const ended: HeldWebhookSlot[] = [];
  await inLanes(held, CONCURRENT_DESCRIBES, async (slot) => {
    if (!(await stillRuns(client, webhookDeliveryWorkflowId(slot.deliveryId, slot.run)))) ended.push(slot);
  });
  return freeWebhookSlots(db, ended);
}

async function stillRuns(client: Client, workflowId: string): Promise<boolean> {
  return (await workflowVerdict(client, workflowId)).kind === 'running';
}
