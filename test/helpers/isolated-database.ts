import { randomUUID } from 'node:crypto';
import { QueryTypes } from 'sequelize';
import { migrate } from '../../db/migrate';
import { createSequelize } from '../../db/sequelize';

export interface IsolatedDatabase {
  url: string;
  drop: () => Promise<void>;
}

/**
 * A migrated database of the test file's own, beside the shared test database, for tests that must see
 * every row of a table: the send path's dispatcher and reconciler take every message they find. Copied
 * from `<shared>_template` (which `npm test` migrates before jest starts) in a fraction of a second; made
 * by migrating when there is no template. Dropped by `drop`.
 */
export async function createIsolatedDatabase(sharedUrl: string): Promise<IsolatedDatabase> {
  const shared = new URL(sharedUrl);
  const template = `${shared.pathname.slice(1)}_template`;
  const name = `${shared.pathname.slice(1)}_${randomUUID().replace(/-/g, '').slice(0, 12)}`;
  const admin = createSequelize(sharedUrl);
  const [found] = await admin.query<{ exists: boolean }>('SELECT EXISTS (SELECT 1 FROM pg_database WHERE datname = $1) AS exists', {
    bind: [template],
    type: QueryTypes.SELECT,
  });
  await admin.query(found.exists ? `CREATE DATABASE ${name} TEMPLATE ${template}` : `CREATE DATABASE ${name}`);
  const url = new URL(sharedUrl);
  url.pathname = `/${name}`;
  if (!found.exists) {
    const db = createSequelize(url.toString());
    await migrate(db);
    await db.close();
  }
  return {
    url: url.toString(),
    drop: async () => {
      await admin.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
      await admin.close();
    },
  };
}
