import type { MigrationFn } from 'umzug';
import type { QueryInterface } from 'sequelize';

/**
 * Recovery in seconds after a provider outage (issue 30; docs/delivery.md "When a provider fails").
 *
 * `provider_breakers`: one row per provider route (`email:<provider>`, `whatsapp:<workspace>`,
 * `telegram:<workspace>`): its consecutive provider-level failures, whether it is open, since when, and
 * when the dispatcher last let a probe through. In Postgres rather than Redis because every worker's
 * dispatcher already works there and Redis may be the thing that is down. Written only on failures and
 * state changes; a success writes only when there were failures.
 *
 * On `messages`:
 * - `next_attempt_at`: a message handed back to the outbox after a transient failure is not picked again
 *   before this (backoff without holding an in-flight slot or a Temporal timer).
 * - `send_retries`: its per-message transient failures, which set the backoff.
 * - `redispatches`: how often it was handed back; names its next workflow (`send:<id>:<n + 1>`), so a
 *   new dispatch never collides with a first workflow that is still closing.
 * The outbox index gains nothing: rows in backoff are few and filtered on the heap after the index probe
 * (docs/benchmarks.md has the plan).
 */
export const up: MigrationFn<QueryInterface> = async ({ context }) => {
  await context.sequelize.query(`
    CREATE TABLE provider_breakers (
      route text PRIMARY KEY,
      state text NOT NULL DEFAULT 'closed' CHECK (state IN ('closed', 'open')),
      failures integer NOT NULL DEFAULT 0,
      opened_at timestamptz,
      probe_at timestamptz,
      last_error text,
      updated_at timestamptz NOT NULL DEFAULT now()
    );
    ALTER TABLE messages ADD COLUMN next_attempt_at timestamptz,
      ADD COLUMN send_retries integer NOT NULL DEFAULT 0,
      ADD COLUMN redispatches integer NOT NULL DEFAULT 0;
  `);
};

export const down: MigrationFn<QueryInterface> = async ({ context }) => {
  await context.sequelize.query(`
    ALTER TABLE messages DROP COLUMN next_attempt_at, DROP COLUMN send_retries, DROP COLUMN redispatches;
    DROP TABLE provider_breakers;
  `);
};
