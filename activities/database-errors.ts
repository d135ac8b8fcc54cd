import { BaseError, ConnectionError, TimeoutError } from 'sequelize';

/** PostgreSQL states that mean "not now" rather than "never": shutdown, restart, overload, cancel by timeout. */
const TRANSIENT_SQL_STATES = new Set(['57P01', '57P02', '57P03', '53300', '57014', '40001', '40P01']);
const TRANSIENT_SOCKET_CODES = new Set(['ECONNREFUSED', 'ECONNRESET', 'ETIMEDOUT', 'EPIPE', 'ENOTFOUND', 'EAI_AGAIN']);

/**
 * Whether an error means our own database is unreachable or busy for now. Activities that touch only the
 * database retry such errors until it is back; every other failure is a fact about the message itself.
 */
export function isTransientDatabaseError(error: unknown): boolean {
  if (error instanceof ConnectionError || error instanceof TimeoutError) return true;
  const cause = error instanceof BaseError ? ((error as { original?: unknown }).original ?? error) : error;
  const { code } = (cause ?? {}) as { code?: unknown };
  if (typeof code !== 'string') return false;
  return TRANSIENT_SQL_STATES.has(code) || TRANSIENT_SOCKET_CODES.has(code);
}

/**
 * Runs `work` until it succeeds or `deadlineMs` passes, waiting a little longer after each failure. For
 * writes that must not be lost after a provider accepted a message: retried here, inside the attempt,
 * rather than by a new attempt that would call the provider again.
 */
export async function untilItHolds<T>(work: () => Promise<T>, deadlineMs: number, onRetry: (error: unknown) => void): Promise<T> {
  const deadline = Date.now() + deadlineMs;
  for (let wait = 200; ; wait = Math.min(wait * 2, 5_000)) {
    try {
      return await work();
    } catch (error) {
      if (Date.now() + wait > deadline) throw error;
      onRetry(error);
      await new Promise((resolve) => setTimeout(resolve, wait));
    }
  }
}
