import type { Client } from '@temporalio/client';
import type { Logger } from 'pino';
import type { Sequelize } from 'sequelize';
import { WEBHOOK_DISPATCH_LEASE_MS } from '../core/webhook-delivery';
import { claimWebhookDeliveries, markWebhookDeliveriesDispatched } from '../db/repositories/webhook-dispatch';
import { startWebhookDeliveryWorkflow } from '../temporal/webhooks';
import { handOver, type OutboxLoop, runOutboxLoop } from './outbox-loop';
import { sweepWebhookSlots } from './webhook-slot-sweep';

export interface WebhookDispatcherOptions {
  db: Sequelize;
  client: Client;
  taskQueuePrefix: string;
  logger: Logger;
  /** Deliveries of one endpoint in flight at once (WEBHOOK_IN_FLIGHT_PER_ENDPOINT). */
  perEndpoint: number;
  /** Time between rounds when nothing was waiting or everything was in flight. */
  intervalMs: number;
  /** Time between sweeps for slots whose workflow ended without freeing them (WEBHOOK_SLOT_SWEEP_INTERVAL_MS). */
  sweepIntervalMs: number;
}

/** Long enough for a round of starts; a dispatcher that dies mid-round frees its rows after this. */
const START_LEASE_MS = 30_000;
/** Starts per round: a round stays short, and the next one follows at once while there is room. */
const ROUND_LIMIT = 500;
const CONCURRENT_STARTS = 32;

/**
 * The only way webhook deliveries reach Temporal. The fan-out triggers put one delivery row per event and
 * endpoint in the outbox; each round leases what fits under every endpoint's in-flight bound, round robin
 * between workspaces, starts one workflow per delivery on the control queue, and marks them dispatched.
 * A dead endpoint's backlog waits in Postgres, a workspace's burst takes turns with everyone else's, and
 * Temporal holds at most WEBHOOK_IN_FLIGHT_PER_ENDPOINT deliveries of any endpoint. Safe on every worker:
 * one claims at a time (an advisory lock), and a workflow id never starts twice.
 */
export async function dispatchWebhookRound(options: WebhookDispatcherOptions): Promise<number> {
  const claimed = await claimWebhookDeliveries(options.db, { perEndpoint: options.perEndpoint, limit: ROUND_LIMIT, leaseMs: START_LEASE_MS });
  const started = await handOver(claimed, CONCURRENT_STARTS, async (delivery) => {
    await startWebhookDeliveryWorkflow(options.client, options.taskQueuePrefix, delivery);
  }, (err, delivery) => {
    // The start lease keeps the row until it ends; a later round starts it then.
    options.logger.warn({ err, deliveryId: delivery.deliveryId, workspaceId: delivery.workspaceId }, 'webhook dispatcher: workflow start failed');
  });
  await markWebhookDeliveriesDispatched(options.db, started.map((delivery) => delivery.deliveryId), WEBHOOK_DISPATCH_LEASE_MS);
  return started.length;
}

/** Frees the slots of deliveries whose workflow ended without freeing them, at most once per `sweepIntervalMs` (from `sweptAt`). */
export async function sweepEndedSlots(options: WebhookDispatcherOptions, sweptAt: { at: number }): Promise<void> {
  if (Date.now() - sweptAt.at < options.sweepIntervalMs) return;
  sweptAt.at = Date.now();
  const freed = await sweepWebhookSlots(options.db, options.client);
  if (freed) options.logger.info({ freed }, 'webhook dispatcher: freed the slots of deliveries whose workflow had ended');
}

export function runWebhookDispatcher(options: WebhookDispatcherOptions): OutboxLoop {
  const sweptAt = { at: Date.now() };
  return runOutboxLoop({
    name: 'webhook dispatcher',
    logger: options.logger,
    intervalMs: options.intervalMs,
    round: async () => {
      await sweepEndedSlots(options, sweptAt);
      return dispatchWebhookRound(options);
    },
  });
}
