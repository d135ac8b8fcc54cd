import { randomUUID } from 'node:crypto';
import { migrate } from '../../db/migrate';
import { createSequelize } from '../../db/sequelize';

/**
 * A migrated database of the test file's own, beside the shared test database, for tests that must see
 * every row of a table (the send outbox drains every undispatched message it finds). Dropped by `drop`.
 */
export async function createIsolatedDatabase(sharedUrl: string): Promise<{ url: string; drop: () => Promise<void> }> {
  const name = `messaging_test_${randomUUID().replace(/-/g, '').slice(0, 12)}`;
  const admin = createSequelize(sharedUrl);
  await admin.query(`CREATE DATABASE ${name}`);
  const url = new URL(sharedUrl);
  url.pathname = `/${name}`;
  const db = createSequelize(url.toString());
  await migrate(db);
  await db.close();
  return {
    url: url.toString(),
    drop: async () => {
      await admin.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
      await admin.close();
    },
  };
}
