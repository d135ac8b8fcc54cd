import { Sequelize } from 'sequelize';

/** One pool per process. Queries are logged only at debug level: the request log already times them. */
export function createSequelize(databaseUrl: string, log?: (sql: string) => void): Sequelize {
  return new Sequelize(databaseUrl, {
    dialect: 'postgres',
    logging: log ?? false,
    pool: { max: 20, min: 0, idle: 10_000, acquire: 10_000 },
    define: { underscored: true, timestamps: false },
  });
}
