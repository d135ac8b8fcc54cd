import type { QueryInterface, Sequelize } from 'sequelize';
import { SequelizeStorage, Umzug } from 'umzug';
import { migrations } from './migrations';

export function createMigrator(sequelize: Sequelize): Umzug<QueryInterface> {
  return new Umzug({
    migrations,
    context: sequelize.getQueryInterface(),
    storage: new SequelizeStorage({ sequelize, tableName: 'schema_migrations' }),
    logger: undefined,
  });
}

/**
 * Applies pending migrations. An advisory lock makes concurrent starters (several API replicas, or
 * jest workers) wait for one another instead of racing on the same DDL.
 */
export async function migrate(sequelize: Sequelize): Promise<string[]> {
  const lockId = 727_001;
  return sequelize.transaction(async (transaction) => {
    await sequelize.query('SELECT pg_advisory_xact_lock(:lockId)', { replacements: { lockId }, transaction });
    const applied = await createMigrator(sequelize).up();
    return applied.map((migration) => migration.name);
  });
}
