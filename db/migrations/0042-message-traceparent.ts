import type { MigrationFn } from 'umzug';
import type { QueryInterface } from 'sequelize';

/**
 * Issue 34: the W3C `traceparent` of the request that accepted a message, written with the row when tracing
 * is on (NULL otherwise), so the workflow the dispatcher starts later joins that request's trace
 * (infra/trace-context.ts, docs/observability.md, Traces). A nullable column without a default: adding it
 * rewrites nothing.
 */
export const up: MigrationFn<QueryInterface> = async ({ context }) => {
  await context.sequelize.query('ALTER TABLE messages ADD COLUMN traceparent text');
};

export const down: MigrationFn<QueryInterface> = async ({ context }) => {
  await context.sequelize.query('ALTER TABLE messages DROP COLUMN traceparent');
};
