import { continueAsNew, proxyActivities, sleep } from '@temporalio/workflow';
import type { CheckDomainResult, DomainActivities } from '../activities/domains';
import { checkBackoff, RECHECK_INTERVAL_MS, VERIFICATION_WINDOW_MS } from '../core/domain-status';

/** Background checks retry a failing activity (database, SES) for as long as it takes. */
const background = proxyActivities<DomainActivities>({
  startToCloseTimeout: '1 minute',
  retry: { initialInterval: '10 seconds', backoffCoefficient: 2, maximumInterval: '10 minutes' },
});

/** A check someone is waiting for in an HTTP request: one quick retry, then the request gives its answer. */
const interactive = proxyActivities<DomainActivities>({
  startToCloseTimeout: '20 seconds',
  retry: { initialInterval: '1 second', maximumAttempts: 2 },
});

export interface DomainVerificationInput {
  workspaceId: string;
  domainId: string;
  /**
   * While set (ISO time), records are re-checked with backoff until the domain is verified or this time
   * passes. Absent: the domain is verified and is re-checked daily for drift.
   */
  checkUntil?: string;
}

/**
 * One per domain (id `domain-verification:<domainId>`), started when the domain is created. Inside the
 * 72-hour window a failing domain stays `pending`; at its end the claim expires: the last check makes it
 * `failed`, saying the window passed, and the workflow ends (a later verify starts a new window). An
 * expired claim reserves nothing, as no unverified claim does: a name is unique among verified domains.
 * A verified domain is checked every 24 hours; drift makes it `failed` and opens a new window, so fixing
 * the records brings it back without anyone asking.
 */
export async function domainVerificationWorkflow(input: DomainVerificationInput): Promise<void> {
  const { workspaceId, domainId } = input;
  if (input.checkUntil) {
    const deadline = Date.parse(input.checkUntil);
    for (let attempt = 0; ; attempt += 1) {
      const final = Date.now() >= deadline;
      const result = await background.checkDomain({ workspaceId, domainId, failPending: final, windowEnded: final });
      if (!result.found) return;
      if (result.status === 'verified') break;
      if (final && result.status === 'failed') return;
      // Past the deadline only an inconclusive answer (DNS unreachable) is left; it is asked again, slowly.
      await sleep(final ? checkBackoff(attempt) : Math.min(checkBackoff(attempt), deadline - Date.now()));
    }
    await continueAsNew<typeof domainVerificationWorkflow>({ workspaceId, domainId });
  }
  await sleep(RECHECK_INTERVAL_MS);
  const result = await background.checkDomain({ workspaceId, domainId, failPending: true });
  if (!result.found) return;
  const reopen = result.status === 'verified' ? {} : { checkUntil: new Date(Date.now() + VERIFICATION_WINDOW_MS).toISOString() };
  // A new run per day keeps the history short however long the domain lives.
  await continueAsNew<typeof domainVerificationWorkflow>({ workspaceId, domainId, ...reopen });
}

/**
 * The check of `POST /domains/:id/verify` (id `domain-check:<domainId>`): the API waits for its result, so
 * DNS lookups and the SES call stay in activities. Its verdict is final: failing records make it `failed`.
 */
export async function domainCheckWorkflow(input: { workspaceId: string; domainId: string }): Promise<CheckDomainResult> {
  return interactive.checkDomain({ ...input, failPending: true });
}
