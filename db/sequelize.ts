import { BaseError, ConnectionError, Sequelize, TimeoutError } from 'sequelize';

export interface SequelizeOptions {
  /** Receives every statement (debugging, tests that check what a query reads). */
  log?: (sql: string) => void;
  /**
   * Postgres cancels any statement that runs longer (its `statement_timeout`); 0 or absent means no
   * limit. API processes set it so no request holds a connection unbounded; migrations and workers,
   * whose long statements are expected, do not.
   */
  statementTimeoutMs?: number;
  /** Connections in the pool (20 unless set: the audience pool is smaller, db/audience-session.ts). */
  poolMax?: number;
  /** How long a query waits for a free connection (POOL_ACQUIRE_TIMEOUT_MS unless set). */
  acquireTimeoutMs?: number;
}

/** How long a query waits for a free connection of a pool before it fails (a 503 in the API). */
export const POOL_ACQUIRE_TIMEOUT_MS = 10_000;

/** One pool per process. Queries are logged only at debug level: the request log already times them. */
export function createSequelize(databaseUrl: string, options: SequelizeOptions = {}): Sequelize {
  return new Sequelize(databaseUrl, {
    dialect: 'postgres',
    logging: options.log ?? false,
    pool: { max: options.poolMax ?? 20, min: 0, idle: 10_000, acquire: options.acquireTimeoutMs ?? POOL_ACQUIRE_TIMEOUT_MS },
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

/** PostgreSQL states that mean "not now" rather than "never": shutdown, restart, overload, cancel by timeout. */
const TRANSIENT_SQL_STATES = new Set(['57P01', '57P02', '57P03', '53300', '57014', '40001', '40P01']);
const TRANSIENT_SOCKET_CODES = new Set(['ECONNREFUSED', 'ECONNRESET', 'ETIMEDOUT', 'EPIPE', 'ENOTFOUND', 'EAI_AGAIN']);

/**
 * Whether an error means the database is unreachable or busy for now. Activities that touch only the
 * database retry such errors until it is back; the API answers them 503 (try again), never 500.
 */
export function isTransientDatabaseError(error: unknown): boolean {
  if (error instanceof ConnectionError || error instanceof TimeoutError) return true;
  const cause = error instanceof BaseError ? ((error as { original?: unknown }).original ?? error) : error;
  const { code } = (cause ?? {}) as { code?: unknown };
  if (typeof code !== 'string') return false;
  return TRANSIENT_SQL_STATES.has(code) || TRANSIENT_SOCKET_CODES.has(code);
}

/**
 * An error PostgreSQL itself sent, as `pg` raises it: the named statements of db/prepared.ts run on the
 * pool's own client, so their errors are not wrapped by Sequelize. Only the server's errors carry a
 * severity.
 */
function isPostgresError(error: unknown): boolean {
  return typeof error === 'object' && error !== null && typeof (error as { severity?: unknown }).severity === 'string';
}

/**
 * The same, for an error of our own database only (a Sequelize error, or PostgreSQL's own through a named
 * statement): the API must not take another service's refused connection for a database outage.
 */
export function isDatabaseUnavailable(error: unknown): boolean {
  return (error instanceof BaseError || isPostgresError(error)) && isTransientDatabaseError(error);
}
