/**
 * The life of a sending domain (decisions: `pending`, `verified`, `failed`) and the timing of its
 * background checks. Kept free of imports so the verification workflow can use it.
 *
 * - A new domain is `pending`. Background checks in its first 72 hours leave it `pending` while the records
 *   are missing or wrong (DNS takes time to propagate); it becomes `failed` only when the window closes.
 * - A check the customer asks for (`POST /domains/:id/verify`) gives its verdict at once: `verified` or `failed`.
 * - A `verified` domain whose records stop checking becomes `failed` (drift), whoever checked.
 * - A check that could not reach DNS (timeout, SERVFAIL) changes nothing.
 */
export const DOMAIN_STATUSES = ['pending', 'verified', 'failed'] as const;
export type DomainStatus = (typeof DOMAIN_STATUSES)[number];

export type DomainEventType = 'domain.verified' | 'domain.failed';

/** How long after creation (or after a verify that failed, or after drift) the records are re-checked with backoff. */
export const VERIFICATION_WINDOW_MS = 72 * 60 * 60 * 1000;
/** How often a verified domain's records are checked again for drift. */
export const RECHECK_INTERVAL_MS = 24 * 60 * 60 * 1000;
/** Waits between background checks inside the window: quick at first, when the customer is publishing, then hourly. */
export const CHECK_BACKOFF_MS = [1, 2, 5, 10, 20, 30, 60].map((minutes) => minutes * 60 * 1000);

export function checkBackoff(attempt: number): number {
  return CHECK_BACKOFF_MS[Math.min(attempt, CHECK_BACKOFF_MS.length - 1)];
}

export function nextDomainStatus(
  current: DomainStatus,
  outcome: 'verified' | 'failed' | 'inconclusive',
  options: { failPending: boolean },
): DomainStatus {
  if (outcome === 'verified') return 'verified';
  if (outcome === 'inconclusive') return current;
  return current === 'pending' && !options.failPending ? 'pending' : 'failed';
}

/** The webhook event a status change emits, if any. */
export function statusEvent(previous: DomainStatus, next: DomainStatus): DomainEventType | null {
  if (previous === next) return null;
  if (next === 'verified') return 'domain.verified';
  if (next === 'failed') return 'domain.failed';
  return null;
}
