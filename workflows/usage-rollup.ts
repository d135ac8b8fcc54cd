import { continueAsNew, proxyActivities, sleep } from '@temporalio/workflow';
import type { Activities } from '../activities';
import { periodKey, usagePeriodAt } from '../core/plans';

const { closeUsagePeriod } = proxyActivities<Activities>({
  startToCloseTimeout: '10 minutes',
  retry: { initialInterval: '10 seconds', backoffCoefficient: 2, maximumInterval: '10 minutes' },
});

/** Sends reserved just before midnight may still commit a moment later; the close waits for them. */
const SETTLE_MS = 10 * 60 * 1000;

/**
 * One instance for the whole deployment (id `usage-rollup`): sleeps until each calendar month is over,
 * writes every workspace's usage statement for it (what overage billing reads), and moves on to the
 * next month. The month to close travels in the input, so a late start still closes the right one.
 */
export async function usageRollupWorkflow(input: { periodStart?: string } = {}): Promise<void> {
  const period = input.periodStart
    ? usagePeriodAt(new Date(`${input.periodStart}T00:00:00Z`))
    : usagePeriodAt(new Date());
  const wait = period.end.getTime() + SETTLE_MS - Date.now();
  if (wait > 0) await sleep(wait);
  await closeUsagePeriod(periodKey(period));
  await continueAsNew<typeof usageRollupWorkflow>({ periodStart: periodKey(usagePeriodAt(period.end)) });
}
