import { loadConfig } from '../core/config';
import { migrate } from '../db/migrate';
import { createSequelize } from '../db/sequelize';

/**
 * Makes `<test database>_template`: a freshly migrated database that test files copy (CREATE DATABASE …
 * TEMPLATE) when they need one of their own (test/helpers/isolated-database.ts). Nobody connects to it,
 * which is what Postgres needs to copy it.
 */
async function main(): Promise<void> {
  const config = loadConfig(process.env);
  const url = new URL(config.DATABASE_URL);
  const template = `${url.pathname.slice(1)}_template`;
  const admin = createSequelize(config.DATABASE_URL);
  await admin.query(`DROP DATABASE IF EXISTS ${template} WITH (FORCE)`);
  await admin.query(`CREATE DATABASE ${template}`);
  await admin.close();
  url.pathname = `/${template}`;
  const db = createSequelize(url.toString());
  await migrate(db);
  await db.close();
}

main().catch((err: unknown) => {
  console.error(err instanceof Error ? err.message : err);
  process.exit(1);
});
