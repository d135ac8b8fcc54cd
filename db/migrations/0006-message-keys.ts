import type { MigrationFn } from 'umzug';
import type { QueryInterface } from 'sequelize';

/**
 * Idempotency keys move out of `messages` into a table of their own:
 * - a key is kept forever (decisions) even when a retention policy removes old messages;
 * - the lookup must probe each key, whatever the statistics say. A workspace the statistics have not seen
 *   yet (a new or fast-growing sender) is estimated at about one row, and with the workspace first in an
 *   index the planner then reads all of the workspace's keys through that prefix and filters them: a batch
 *   of 100 keys cost 15 ms once the workspace held 30,000 messages (docs/benchmarks.md). With the key
 *   first, and no other index on the table, the only index path probes the keys.
 * Deleting a workspace then scans this table for its keys; that is rare and runs in the background.
 */
export const up: MigrationFn<QueryInterface> = async ({ context }) => {
  await context.sequelize.query(`
    CREATE TABLE message_keys (
      workspace_id uuid NOT NULL REFERENCES workspaces (id) ON DELETE CASCADE,
      idempotency_key text NOT NULL,
      message_id uuid NOT NULL,
      -- SHA-256 of the accepted request, so a repeat with another body can be flagged (bodyMismatch).
      request_hash text NOT NULL,
      created_at timestamptz NOT NULL DEFAULT now(),
      PRIMARY KEY (idempotency_key, workspace_id)
    );
    INSERT INTO message_keys (workspace_id, idempotency_key, message_id, request_hash, created_at)
      SELECT workspace_id, idempotency_key, id, request_hash, created_at FROM messages;
    ALTER TABLE messages DROP CONSTRAINT messages_workspace_id_idempotency_key_key;
  `);
};

export const down: MigrationFn<QueryInterface> = async ({ context }) => {
  await context.sequelize.query(`
    ALTER TABLE messages ADD CONSTRAINT messages_workspace_id_idempotency_key_key UNIQUE (workspace_id, idempotency_key);
    DROP TABLE message_keys;
  `);
};
