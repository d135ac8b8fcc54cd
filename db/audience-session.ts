import { QueryTypes, type Sequelize, type Transaction } from 'sequelize';

/**
 * Runs audience queries (segment counts, samples, member lists) in a transaction with settings suited
 * to one large read. JIT compilation is off: on a million contacts the planner's cost passes its
 * threshold and it spends a few hundred milliseconds compiling for a query that runs in less.
 * work_mem is raised for this transaction only, so a tag, list or event set of up to about a million
 * contacts is hashed once in memory instead of being probed again for every contact, or spilled.
 * A statement timeout keeps one pathological tree from holding a connection for long.
 */
export async function inAudienceSession<T>(db: Sequelize, work: (transaction: Transaction) => Promise<T>): Promise<T> {
  return db.transaction(async (transaction) => {
    await db.query("SELECT set_config('jit', 'off', true), set_config('work_mem', '32MB', true), set_config('statement_timeout', '30s', true)", {
      type: QueryTypes.SELECT,
      transaction,
    });
    return work(transaction);
  });
}
