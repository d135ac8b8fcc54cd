import { Sequelize } from 'sequelize';

export interface SequelizeOptions {
  /** Receives every statement (debugging, tests that check what a query reads). */
  log?: (sql: string) => void;
  /**
   * Postgres cancels any statement that runs longer (its `statement_timeout`); 0 or absent means no
   * limit. API processes set it so no request holds a connection unbounded; migrations and workers,
   * whose long statements are expected, do not.
   */
  statementTimeoutMs?: number;
}

/** One pool per process. Queries are logged only at debug level: the request log already times them. */
export function createSequelize(databaseUrl: string, options: SequelizeOptions = {}): Sequelize {
  return new Sequelize(databaseUrl, {
    dialect: 'postgres',
    logging: options.log ?? false,
    pool: { max: 20, min: 0, idle: 10_000, acquire: 10_000 },
    define: { underscored: true, timestamps: false },
    ...(options.statementTimeoutMs && { dialectOptions: { statement_timeout: options.statementTimeoutMs } }),
  });
}

/** Postgres' SQLSTATE for a statement cancelled by statement_timeout (or by an operator). */
const QUERY_CANCELED = '57014';

/** Whether an error is a statement Postgres cancelled; Sequelize keeps the driver's error as `original`. */
export function isCancelledStatement(error: unknown): boolean {
  const original = (error as { original?: { code?: unknown } } | null)?.original;
  return original?.code === QUERY_CANCELED;
}
