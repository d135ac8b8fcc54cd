import type { MigrationFn } from 'umzug';
import type { QueryInterface } from 'sequelize';

/**
 * Columns that keep the send path exactly-once where it can be, and never stuck:
 * - `delivery_claim`/`delivery_claimed_until`: the attempt fence. A delivery attempt claims the message
 *   right before it calls the provider and renews the lease while it lives; a second attempt beside a live
 *   first one stands down, and one that finds an expired claim without a provider id knows a previous
 *   attempt died with an unknown outcome (counted, decisions.md).
 * - `dispatch_lease_until`: the outbox claims rows with a lease instead of holding row locks while it
 *   waits on Temporal.
 * - `reconcile_after`: when the reconciler next looks at an unfinished message whose workflow it found
 *   running, so a long provider outage does not make it describe the same workflows every round.
 */
export const up: MigrationFn<QueryInterface> = async ({ context }) => {
  await context.sequelize.query(`
    ALTER TABLE messages
      ADD COLUMN delivery_claim uuid,
      ADD COLUMN delivery_claimed_until timestamptz,
      ADD COLUMN dispatch_lease_until timestamptz,
      ADD COLUMN reconcile_after timestamptz;
    -- The reconciler's scan: unfinished messages, oldest change first. Small, since finished ones leave it.
    CREATE INDEX messages_unfinished_idx ON messages (updated_at) WHERE status IN ('queued', 'sending');
  `);
};

export const down: MigrationFn<QueryInterface> = async ({ context }) => {
  await context.sequelize.query(`
    DROP INDEX messages_unfinished_idx;
    ALTER TABLE messages DROP COLUMN delivery_claim, DROP COLUMN delivery_claimed_until,
      DROP COLUMN dispatch_lease_until, DROP COLUMN reconcile_after;
  `);
};
