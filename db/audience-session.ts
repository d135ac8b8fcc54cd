import { QueryTypes, type Sequelize, type Transaction } from 'sequelize';
import { createSequelize } from './sequelize';

/**
 * How long an audience query waits for a connection of its pool. Every statement there is cancelled after
 * AUDIENCE_STATEMENT_TIMEOUT_MS, at most half of this (core/config.ts), so a request queued behind a busy
 * pool gets its turn before it gives up.
 */
export const AUDIENCE_ACQUIRE_TIMEOUT_MS = 30_000;

/**
 * The API's pool for audience queries, apart from the one reads and sends use: a workspace that floods
 * previews and estimates can take only these few connections, and each of its statements is cancelled
 * after `statementTimeoutMs`. Workers, whose audience reads are paced by their own activity slots, keep
 * using their one pool.
 */
export function createAudiencePool(databaseUrl: string, options: { size: number; statementTimeoutMs: number }): Sequelize {
  return createSequelize(databaseUrl, { poolMax: options.size, statementTimeoutMs: options.statementTimeoutMs, acquireTimeoutMs: AUDIENCE_ACQUIRE_TIMEOUT_MS });
}

/**
 * Runs audience queries (segment counts, samples, member lists) in a transaction with settings suited
 * to one large read. JIT compilation is off: on a million contacts the planner's cost passes its
 * threshold and it spends a few hundred milliseconds compiling for a query that runs in less.
 * work_mem is raised for this transaction only, so a tag, list or event set of up to about a million
 * contacts is hashed once in memory instead of being probed again for every contact, or spilled.
 * A statement timeout keeps one pathological tree from holding a connection for long: 30 s, or the
 * pool's own when that is shorter (the API's audience pool), never longer than the pool allows.
 */
export async function inAudienceSession<T>(db: Sequelize, work: (transaction: Transaction) => Promise<T>): Promise<T> {
  return db.transaction(async (transaction) => {
    await db.query(
      `SELECT set_config('jit', 'off', true), set_config('work_mem', '32MB', true),
         set_config('statement_timeout', (SELECT LEAST(NULLIF(setting::int, 0), 30000)::text FROM pg_settings WHERE name = 'statement_timeout'), true)`,
      { type: QueryTypes.SELECT, transaction },
    );
    return work(transaction);
  });
}
