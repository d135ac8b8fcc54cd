import { retryAfterSecondsOf } from './errors';
import { repeatableByKey } from './idempotency';

export interface RetryOptions {
  /** Tries in all, the first included (default 3: two retries). 1 turns retries off. */
  maxAttempts?: number;
  /**
   * The longest wait before a retry, in ms (default 10,000). A Retry-After asking for longer is not waited
   * for: the answer (a 429 or 503) is returned at once, as a MessagingApiError through unwrap.
   */
  maxDelayMs?: number;
  /** The first backoff when the answer gives no Retry-After (default 500 ms), doubled on each retry. */
  baseDelayMs?: number;
  /** Called before each wait: for logs and metrics. */
  onRetry?: (retry: RetryEvent) => void;
}

export interface RetryEvent {
  /** The attempt that just failed, from 1. */
  attempt: number;
  delayMs: number;
  method: string;
  url: string;
  /** The answer's status, or undefined when no response arrived (then `error` is set). */
  status?: number;
  error?: unknown;
}

/**
 * 429: the key's or the workspace's rate limit, or a full queue: nothing was done, try later. 503: the
 * service's database refused the statement (cancelled at its timeout, or unreachable), so the request's
 * transaction did not commit. Both are safe to repeat for every method.
 */
const RETRIED_STATUSES = new Set([429, 503]);

/** Methods HTTP defines as idempotent: a repeat after a lost response cannot do the work twice. */
const IDEMPOTENT_METHODS = new Set(['GET', 'HEAD', 'OPTIONS', 'PUT', 'DELETE']);

export const DEFAULT_RETRY_OPTIONS = { maxAttempts: 3, maxDelayMs: 10_000, baseDelayMs: 500 } as const;

/**
 * The wait before retry number `attempt` (1 for the first retry), in ms, or null when it is not worth
 * waiting: the service's Retry-After (seconds or an HTTP date) when it gives one, else capped exponential
 * backoff with jitter (half the step fixed, half random, so clients that failed together spread out).
 */
export function retryDelayMs(
  attempt: number,
  retryAfter: string | null | undefined,
  options: { maxDelayMs: number; baseDelayMs: number },
  random: () => number = Math.random,
  now: number = Date.now(),
): number | null {
  const seconds = retryAfterSecondsOf(retryAfter, now);
  if (seconds !== undefined) {
    const delay = seconds * 1000;
    return delay <= options.maxDelayMs ? delay : null;
  }
  const step = Math.min(options.maxDelayMs, options.baseDelayMs * 2 ** (attempt - 1));
  return Math.round(step / 2 + (random() * step) / 2);
}

/**
 * A fetch that repeats a request the service refused for now (429, 503), and one that got no response when
 * repeating it cannot do the work twice: an idempotent method, or a POST whose body carries an
 * idempotencyKey (or that the service deduplicates itself). A POST without one is never repeated after a
 * lost response: the first may have been accepted.
 */
export function retryingFetch(baseFetch: (request: Request) => Promise<Response>, options: RetryOptions = {}): (request: Request) => Promise<Response> {
  const maxAttempts = Math.max(1, options.maxAttempts ?? DEFAULT_RETRY_OPTIONS.maxAttempts);
  const delays = { maxDelayMs: options.maxDelayMs ?? DEFAULT_RETRY_OPTIONS.maxDelayMs, baseDelayMs: options.baseDelayMs ?? DEFAULT_RETRY_OPTIONS.baseDelayMs };
  if (maxAttempts === 1) return baseFetch;

  return async (request) => {
    let repeatableAfterLoss: boolean | undefined;
    for (let attempt = 1; ; attempt++) {
      const last = attempt === maxAttempts;
      // A body can be read once: every attempt but the last sends a copy.
      const sent = last ? request : request.clone();
      let response: Response;
      try {
        response = await baseFetch(sent);
      } catch (error) {
        if (last || request.signal.aborted) throw error;
        repeatableAfterLoss ??= IDEMPOTENT_METHODS.has(request.method) || (await repeatableByKey(request));
        if (!repeatableAfterLoss) throw error;
        const delayMs = retryDelayMs(attempt, undefined, delays);
        if (delayMs === null) throw error;
        options.onRetry?.({ attempt, delayMs, method: request.method, url: request.url, error });
        await sleep(delayMs, request.signal);
        continue;
      }
      if (last || !RETRIED_STATUSES.has(response.status)) return response;
      const delayMs = retryDelayMs(attempt, response.headers.get('retry-after'), delays);
      if (delayMs === null) return response;
      options.onRetry?.({ attempt, delayMs, method: request.method, url: request.url, status: response.status });
      // The refused answer is dropped: its body is never read, and an unread body holds the connection.
      await response.body?.cancel();
      await sleep(delayMs, request.signal);
    }
  };
}

/** Waits, unless the caller aborts the request meanwhile (then the abort reason is thrown). */
function sleep(ms: number, signal: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal.aborted) return reject(signal.reason as Error);
    const onAbort = () => {
      clearTimeout(timer);
      reject(signal.reason as Error);
    };
    const timer = setTimeout(() => {
      signal.removeEventListener('abort', onAbort);
      resolve();
    }, ms);
    signal.addEventListener('abort', onAbort, { once: true });
  });
}
