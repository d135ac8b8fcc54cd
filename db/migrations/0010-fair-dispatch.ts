import type { MigrationFn } from 'umzug';
import type { QueryInterface } from 'sequelize';

/**
 * The outbox becomes the delivery engine's queue (docs/delivery.md):
 * - `priority`, derived from the kind (transactional 1, automation 2, campaign 3), so one index serves
 *   "this workspace's next messages, most urgent first". Stored, because the index needs it.
 * - `messages_outbox_fair_idx`: messages waiting to be dispatched, by channel and workspace (a message
 *   canceled before dispatch leaves it). The dispatcher walks the
 *   distinct workspaces of a channel through it (one probe each) and takes each one's next messages.
 * - `messages_in_flight_idx`: messages handed to Temporal (or being handed) and not finished: what the
 *   dispatcher counts against each channel's bound. Small, since finished messages leave it.
 * - `workflow_id`: the workflow that carries the message (its own `send:<id>`, or the batch it travels in),
 *   so the reconciler asks Temporal about the right one.
 * - `messages_unfinished_idx` (0009) becomes the reconciler's `messages_dispatched_unfinished_idx`, which
 *   leaves out the undispatched backlog it never looks at.
 */
export const up: MigrationFn<QueryInterface> = async ({ context }) => {
  await context.sequelize.query(`
    ALTER TABLE messages ADD COLUMN priority smallint NOT NULL
      GENERATED ALWAYS AS (CASE kind WHEN 'transactional' THEN 1 WHEN 'automation' THEN 2 ELSE 3 END) STORED,
      ADD COLUMN workflow_id text;
    DROP INDEX messages_outbox_idx;
    CREATE INDEX messages_outbox_fair_idx ON messages (channel, workspace_id, priority, created_at) WHERE dispatched_at IS NULL AND status = 'queued';
    CREATE INDEX messages_in_flight_idx ON messages (channel, priority)
      WHERE status IN ('queued', 'sending') AND (dispatched_at IS NOT NULL OR dispatch_lease_until IS NOT NULL);
    DROP INDEX messages_unfinished_idx;
    CREATE INDEX messages_dispatched_unfinished_idx ON messages (updated_at) WHERE status IN ('queued', 'sending') AND dispatched_at IS NOT NULL;
  `);
};

export const down: MigrationFn<QueryInterface> = async ({ context }) => {
  await context.sequelize.query(`
    DROP INDEX messages_dispatched_unfinished_idx;
    CREATE INDEX messages_unfinished_idx ON messages (updated_at) WHERE status IN ('queued', 'sending');
    DROP INDEX messages_in_flight_idx;
    DROP INDEX messages_outbox_fair_idx;
    CREATE INDEX messages_outbox_idx ON messages (created_at) WHERE dispatched_at IS NULL;
    ALTER TABLE messages DROP COLUMN priority, DROP COLUMN workflow_id;
  `);
};
