import { continueAsNew, patched, proxyActivities, sleep } from '@temporalio/workflow';
import type { ReconcileOptions } from '../activities/reconciler';
import type { Activities } from '../activities';

export interface MessageReconcilerInput {
  /** Time between rounds. */
  intervalMs: number;
  round: ReconcileOptions;
}

/** Our own database and Temporal only: retried until they answer. */
const { reconcileMessages, reconcileCampaigns, matchParkedProviderEvents } = proxyActivities<Activities>({
  startToCloseTimeout: '2 minutes',
  retry: { initialInterval: '10 seconds', backoffCoefficient: 2, maximumInterval: '5 minutes' },
});

/** Rounds per run, so the history stays short (each round is a few events). */
const ROUNDS_PER_RUN = 100;

/**
 * One for the deployment (id `message-reconciler`): nothing accepted is left without an end state. Each
 * round repairs messages still waiting long after their send workflow closed or vanished (see
 * `reconcileMessages`), restarts unfinished campaigns whose workflow is gone (`reconcileCampaigns`), and
 * records provider notifications parked until their message had a provider id;
 * a full round goes again at once, so a large backlog of repairs drains quickly.
 */
export async function messageReconcilerWorkflow(input: MessageReconcilerInput): Promise<void> {
  for (let round = 0; round < ROUNDS_PER_RUN; round += 1) {
    const report = await reconcileMessages(input.round);
    // Runs started before campaigns were reconciled replay without the call.
    const campaigns = patched('reconcile-campaigns') ? await reconcileCampaigns(input.round) : { checked: 0 };
    const parked = await matchParkedProviderEvents({ limit: input.round.limit });
    const full = [report.checked, campaigns.checked, parked.recorded].some((count) => count >= input.round.limit);
    if (!full) await sleep(input.intervalMs);
  }
  await continueAsNew<typeof messageReconcilerWorkflow>(input);
}
