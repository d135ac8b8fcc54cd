import type { MigrationFn } from 'umzug';
import type { QueryInterface } from 'sequelize';

/**
 * Journey message steps skipped at run time (issue 29; docs/journeys.md "Skipped steps").
 *
 * `journey_skips`: one row per enrollment and message node the journey passed over without a message
 * (suppressed, no reachable identity, no sender, quota exceeded, ...), written by the activity that
 * decided it. The key makes a retried activity write it once. The contact's journey reads it by contact,
 * the enrollment list by enrollment.
 *
 * `journey_node_counts`: the automation's per-node counters (GET /automations/:id/stats), moved in the
 * same statement as the row they count, so the stats never scan the skips of a large automation.
 * `outcome` is `skipped:<reason>`.
 */
export const up: MigrationFn<QueryInterface> = async ({ context }) => {
  await context.sequelize.query(`
    CREATE TABLE journey_skips (
      workspace_id uuid NOT NULL,
      enrollment_id uuid NOT NULL REFERENCES enrollments (id) ON DELETE CASCADE,
      node_id text NOT NULL,
      automation_id uuid NOT NULL,
      contact_id uuid NOT NULL,
      node_label text NOT NULL,
      reason text NOT NULL,
      skipped_at timestamptz NOT NULL,
      PRIMARY KEY (workspace_id, enrollment_id, node_id)
    );
    CREATE INDEX journey_skips_contact_idx ON journey_skips (workspace_id, contact_id, skipped_at DESC);
    CREATE TABLE journey_node_counts (
      workspace_id uuid NOT NULL,
      automation_id uuid NOT NULL,
      node_id text NOT NULL,
      outcome text NOT NULL,
      count bigint NOT NULL DEFAULT 0,
      PRIMARY KEY (workspace_id, automation_id, node_id, outcome),
      FOREIGN KEY (workspace_id, automation_id) REFERENCES automations (workspace_id, id) ON DELETE CASCADE
    );
  `);
};

export const down: MigrationFn<QueryInterface> = async ({ context }) => {
  await context.sequelize.query('DROP TABLE journey_node_counts; DROP TABLE journey_skips;');
};
