/**
 * How webhook deliveries are attempted (decisions: "Webhooks"). Kept free of imports so the delivery
 * workflow can use it.
 */
const SECOND = 1000;
const MINUTE = 60 * SECOND;
const HOUR = 60 * MINUTE;

/** Waits before each attempt after the first: eight attempts over about 27.6 hours. */
export const WEBHOOK_RETRY_DELAYS_MS = [5 * SECOND, 5 * MINUTE, 30 * MINUTE, 2 * HOUR, 5 * HOUR, 10 * HOUR, 10 * HOUR] as const;

export const WEBHOOK_ATTEMPTS = WEBHOOK_RETRY_DELAYS_MS.length + 1;

/** An attempt succeeds on a 2xx answer within this time; anything slower is a failure. */
export const WEBHOOK_TIMEOUT_MS = 15 * SECOND;

/** An endpoint whose deliveries have all failed for this long is disabled. */
export const WEBHOOK_DISABLE_AFTER_FAILING_MS = 5 * 24 * HOUR;

/**
 * How long a dispatched delivery counts as in flight without finishing: longer than its whole schedule
 * (with room for workers being down a while). Past it the delivery's workflow is taken to be gone
 * (terminated in the Temporal UI, its history lost), and the dispatcher starts it again.
 */
export const WEBHOOK_DISPATCH_LEASE_MS = 48 * HOUR;

/** The wait after attempt `attempt` (1-based) fails, or null when it was the last. */
export function retryDelayAfter(attempt: number): number | null {
  return attempt >= 1 && attempt < WEBHOOK_ATTEMPTS ? WEBHOOK_RETRY_DELAYS_MS[attempt - 1] : null;
}

/** What one attempt's answer means. */
export type AttemptVerdict = 'succeeded' | 'failed' | 'gone';

/** 2xx succeeds; 410 Gone means the receiver wants no more (the endpoint is disabled); anything else failed. */
export function verdictOfStatus(statusCode: number): AttemptVerdict {
  if (statusCode >= 200 && statusCode <= 299) return 'succeeded';
  return statusCode === 410 ? 'gone' : 'failed';
}
