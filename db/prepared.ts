import type { Sequelize } from 'sequelize';

/** The part of a `pg` client this uses (Sequelize's pool hands out `pg` clients). */
interface PgClient {
  query<R>(config: { name: string; text: string; values: unknown[] }): Promise<{ rows: R[] }>;
}

interface PoolOfPgClients {
  getConnection(options: { type: 'write' }): Promise<PgClient>;
  releaseConnection(connection: PgClient): Promise<void>;
}

/** The SQLSTATE of a unique violation, as `pg` reports it on the error's `code`. */
export const UNIQUE_VIOLATION = '23505';

export function sqlState(error: unknown): string | undefined {
  return typeof error === 'object' && error !== null && 'code' in error && typeof error.code === 'string' ? error.code : undefined;
}

/**
 * Runs a named statement on a connection of Sequelize's pool. PostgreSQL plans a named statement once
 * per connection instead of on every call, which matters on the send path: its statements run hundreds
 * of times a second and planning them cost about as much as running them. Sequelize has no named
 * statements, hence the pool's own client. Errors are `pg`'s (see `sqlState`), not Sequelize's.
 */
export async function preparedQuery<R>(db: Sequelize, name: string, text: string, values: unknown[]): Promise<R[]> {
  const pool = db.connectionManager as unknown as PoolOfPgClients;
  const client = await pool.getConnection({ type: 'write' });
  try {
    return (await client.query<R>({ name, text, values })).rows;
  } finally {
    await pool.releaseConnection(client);
  }
}
