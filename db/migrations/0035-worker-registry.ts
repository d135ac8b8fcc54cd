import type { MigrationFn } from 'umzug';
import type { QueryInterface } from 'sequelize';

/**
 * Issue 30: Redis is not a single point of stopping, and webhook slots are swept (docs/delivery.md "When
 * Redis is away", docs/webhooks.md "Slots of ended workflows").
 *
 * `worker_processes`: one row per live worker process, its heartbeat written every few seconds
 * (workers/worker-registry.ts). While Redis is unreachable each worker paces locally at its share of every
 * rate, the rate divided by the rows that beat lately. A platform table, not a workspace's: it has no
 * `workspace_id`, and rows of workers that stopped beating are deleted after a minute.
 *
 * `webhook_deliveries.slot_checked_at`: when the webhook dispatcher's sweep last asked Temporal whether the
 * delivery's workflow still runs; the sweep takes the longest-unchecked first, a handful per round, from
 * the in-flight deliveries only (the partial index).
 */
export const up: MigrationFn<QueryInterface> = async ({ context }) => {
  await context.sequelize.query(`
    CREATE TABLE worker_processes (
      id uuid PRIMARY KEY,
      host text NOT NULL,
      pid integer NOT NULL,
      started_at timestamptz NOT NULL DEFAULT now(),
      beat_at timestamptz NOT NULL DEFAULT now()
    );
    ALTER TABLE webhook_deliveries ADD COLUMN slot_checked_at timestamptz;
    CREATE INDEX webhook_deliveries_in_flight_idx ON webhook_deliveries (slot_checked_at NULLS FIRST, dispatched_at)
      WHERE status = 'pending' AND dispatched_at IS NOT NULL;
  `);
};

export const down: MigrationFn<QueryInterface> = async ({ context }) => {
  await context.sequelize.query(`
    DROP INDEX webhook_deliveries_in_flight_idx;
    ALTER TABLE webhook_deliveries DROP COLUMN slot_checked_at;
    DROP TABLE worker_processes;
  `);
};
