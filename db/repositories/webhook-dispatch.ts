import { QueryTypes, type Sequelize } from 'sequelize';

/** A delivery the webhook dispatcher took from the outbox, with what its workflow start needs. */
export interface DispatchedDelivery {
  deliveryId: string;
  workspaceId: string;
  webhookId: string;
  /** Which run of the delivery's workflow this is (1, then one more per manual retry or restart). */
  run: number;
}

interface ClaimedRow {
  id: string;
  workspace_id: string;
  webhook_id: string;
  run: number;
}

/**
 * Leases the next deliveries to start, at most `perEndpoint` in flight for each endpoint (a slow or dead
 * endpoint holds only its own slots, and its backlog waits here, not in Temporal) and at most `limit`
 * in the round, taken round robin between workspaces (each workspace's first pick, then each one's
 * second, ...; ties in random order), so a workspace's hundred thousand events never delay another's.
 *
 * A pending delivery is in flight while its lease runs: a short one while its workflow starts, then
 * (once dispatched) one longer than its whole retry schedule. A lease that ran out without the delivery
 * finishing means its workflow is gone; it is taken again as a new run. One dispatcher claims at a time
 * (an advisory lock), so the per-endpoint bound is never passed by two counting at once.
 */
export async function claimWebhookDeliveries(
  db: Sequelize,
  options: { perEndpoint: number; limit: number; leaseMs: number },
): Promise<DispatchedDelivery[]> {
  // An idle round is this one probe of webhook_deliveries_pending_idx, not a transaction: every worker process
  // runs a round every SEND_DISPATCH_INTERVAL_MS.
  const [pending] = await db.query<{ any: boolean }>("SELECT EXISTS (SELECT 1 FROM webhook_deliveries WHERE status = 'pending') AS any", { type: QueryTypes.SELECT });
  if (!pending.any) return [];
  return db.transaction(async (transaction) => {
    const [lock] = await db.query<{ locked: boolean }>("SELECT pg_try_advisory_xact_lock(hashtext('dispatch:webhooks')) AS locked", {
      type: QueryTypes.SELECT,
      transaction,
    });
    if (!lock.locked) return [];
    const rows = await db.query<ClaimedRow>(
      `WITH RECURSIVE endpoints AS (
         -- The endpoints with pending deliveries, one index probe each (a loose scan of the outbox index).
         (SELECT webhook_id FROM webhook_deliveries WHERE status = 'pending' ORDER BY webhook_id LIMIT 1)
         UNION ALL
         SELECT (SELECT d.webhook_id FROM webhook_deliveries d WHERE d.status = 'pending' AND d.webhook_id > endpoints.webhook_id
                 ORDER BY d.webhook_id LIMIT 1)
         FROM endpoints WHERE endpoints.webhook_id IS NOT NULL
       ), room AS (
         SELECT e.webhook_id, w.workspace_id, $1 - (
           SELECT count(*) FROM webhook_deliveries d
           WHERE d.webhook_id = e.webhook_id AND d.status = 'pending' AND d.dispatch_lease_until > now()
         ) AS free
         FROM endpoints e JOIN webhooks w ON w.id = e.webhook_id
       ), picked AS (
         SELECT next.id, room.workspace_id, next.created_at FROM room
         CROSS JOIN LATERAL (
           SELECT d.id, d.created_at FROM webhook_deliveries d
           WHERE d.webhook_id = room.webhook_id AND d.status = 'pending' AND (d.dispatch_lease_until IS NULL OR d.dispatch_lease_until <= now())
           ORDER BY d.created_at LIMIT GREATEST(room.free, 0)
         ) next
       ), chosen AS (
         SELECT id FROM (
           SELECT id, row_number() OVER (PARTITION BY workspace_id ORDER BY created_at) AS turn FROM picked
         ) turns
         ORDER BY turn, random() LIMIT $2
       )
       UPDATE webhook_deliveries d SET
         -- A dispatched delivery whose lease ran out starts a new run; one whose start failed tries the same again.
         run = CASE WHEN d.dispatched_at IS NOT NULL THEN d.run + 1 ELSE d.run END,
         dispatched_at = NULL,
         dispatch_lease_until = now() + make_interval(secs => $3::double precision / 1000),
         updated_at = now()
       FROM chosen WHERE d.id = chosen.id
       RETURNING d.id, d.workspace_id, d.webhook_id, d.run`,
      { bind: [options.perEndpoint, options.limit, options.leaseMs], type: QueryTypes.SELECT, transaction },
    );
    return rows.map((row) => ({ deliveryId: row.id, workspaceId: row.workspace_id, webhookId: row.webhook_id, run: row.run }));
  });
}

/** Marks deliveries whose workflow now runs, leased for as long as their schedule can take. */
export async function markWebhookDeliveriesDispatched(db: Sequelize, deliveryIds: readonly string[], leaseMs: number): Promise<void> {
  if (deliveryIds.length === 0) return;
  await db.query(
    `UPDATE webhook_deliveries SET dispatched_at = now(), dispatch_lease_until = now() + make_interval(secs => $2::double precision / 1000)
     WHERE id = ANY ($1::uuid[]) AND status = 'pending' AND dispatched_at IS NULL`,
    { bind: [deliveryIds, leaseMs] },
  );
}

/** A dispatched delivery whose workflow the sweep asks Temporal about. */
export interface HeldWebhookSlot {
  deliveryId: string;
  workspaceId: string;
  run: number;
}

/**
 * The next in-flight deliveries to check: dispatched at least `olderThanMs` ago and not checked for as
 * long, the longest-unchecked first, at most `limit`. Marking them checked in the same statement spreads
 * the rounds over every slot, and lets two sweeping workers skip each other's picks.
 */
export async function takeHeldWebhookSlots(db: Sequelize, options: { olderThanMs: number; limit: number }): Promise<HeldWebhookSlot[]> {
  const rows = await db.query<{ id: string; workspace_id: string; run: number }>(
    `UPDATE webhook_deliveries d SET slot_checked_at = now()
     FROM (
       SELECT id FROM webhook_deliveries
       WHERE status = 'pending' AND dispatched_at IS NOT NULL
         AND dispatched_at < now() - make_interval(secs => $1::double precision / 1000)
         AND (slot_checked_at IS NULL OR slot_checked_at < now() - make_interval(secs => $1::double precision / 1000))
       ORDER BY slot_checked_at NULLS FIRST, dispatched_at
       LIMIT $2 FOR UPDATE SKIP LOCKED
     ) picked
     WHERE d.id = picked.id
     RETURNING d.id, d.workspace_id, d.run`,
    { bind: [options.olderThanMs, options.limit], type: QueryTypes.SELECT },
  );
  return rows.map((row) => ({ deliveryId: row.id, workspaceId: row.workspace_id, run: row.run }));
}

/**
 * Frees the slots of deliveries whose workflow no longer runs: their lease ends now, so the next claim
 * takes them again as a new run (as when the 48 h lease runs out). Only the run that was checked, and
 * only while still pending: a delivery that finished or was started again in the meantime keeps its row.
 */
export async function freeWebhookSlots(db: Sequelize, slots: readonly HeldWebhookSlot[]): Promise<number> {
  if (slots.length === 0) return 0;
  const [, affected] = await db.query(
    `UPDATE webhook_deliveries d SET dispatch_lease_until = now(), updated_at = now()
     FROM unnest($1::uuid[], $2::int[]) AS freed (id, run)
     WHERE d.id = freed.id AND d.run = freed.run AND d.status = 'pending' AND d.dispatched_at IS NOT NULL`,
    { bind: [slots.map((slot) => slot.deliveryId), slots.map((slot) => slot.run)], type: QueryTypes.UPDATE },
  );
  return Number(affected);
}
