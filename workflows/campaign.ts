import { condition, continueAsNew, defineSignal, proxyActivities, setHandler, workflowInfo } from '@temporalio/workflow';
import type { Activities } from '../activities';
import type { CampaignStatus } from '../core/campaigns';

/**
 * What the API sends after it changed the campaign (the campaign row is the truth; a signal only makes
 * the workflow look at it now rather than at its next round). A cancel also ends a scheduled campaign's
 * wait at once.
 */
export const pauseCampaignSignal = defineSignal('pause');
export const resumeCampaignSignal = defineSignal('resume');
export const cancelCampaignSignal = defineSignal('cancel');

export interface CampaignWorkflowInput {
  workspaceId: string;
  campaignId: string;
  /** When to start (ISO 8601), or null to start now. */
  scheduledAt: string | null;
  /** Recipients written to the outbox so far; absent until the audience snapshot is taken. */
  cursor?: number;
}

/** Our own database only: retried until it answers. */
const { snapshotCampaign, holdCampaignMessages } = proxyActivities<Activities>({
  startToCloseTimeout: '10 minutes',
  retry: { initialInterval: '1 second', backoffCoefficient: 2, maximumInterval: '1 minute' },
});

/** A slice of feeding lasts about a minute; the heartbeat, not the timeout, notices a dead worker. */
const { feedCampaign } = proxyActivities<Activities>({
  startToCloseTimeout: '5 minutes',
  heartbeatTimeout: '30 seconds',
  retry: { initialInterval: '1 second', backoffCoefficient: 2, maximumInterval: '1 minute' },
});

/** Slices per run before continuing as new: about 6 history events each, so a run stays near 600. */
const SLICES_PER_RUN = 100;

/** A paused campaign looks at itself this often even if no signal comes (one lost while Temporal was away). */
const PAUSED_RECHECK = '10 minutes';

/**
 * One broadcast campaign, `campaign:<campaignId>`, from its schedule to its last message (docs/campaigns.md):
 * a durable timer until the send time (a cancel ends it); the audience snapshot; then slices of feeding
 * the outbox a bounded window ahead of the provider, the cursor carried from slice to slice and across
 * continue-as-new. The messages themselves go through the delivery engine (the dispatcher and its
 * batches), like every other send. A pause takes the waiting messages back out of the outbox and moves
 * the cursor back to them; the workflow then waits for a resume or cancel. Returns the final status.
 */
export async function campaignWorkflow(input: CampaignWorkflowInput): Promise<CampaignStatus> {
  const { workspaceId, campaignId } = input;
  let canceled = false;
  let wakeups = 0;
  setHandler(cancelCampaignSignal, () => {
    canceled = true;
    wakeups += 1;
  });
  setHandler(pauseCampaignSignal, () => {
    wakeups += 1;
  });
  setHandler(resumeCampaignSignal, () => {
    wakeups += 1;
  });

  /** Waits for the send time and takes the snapshot: the cursor to feed from, or how the campaign ended. */
  async function start(): Promise<number | CampaignStatus> {
    for (let scheduledAt = input.scheduledAt; ; ) {
      const wait = scheduledAt ? Date.parse(scheduledAt) - Date.now() : 0;
      if (wait > 0) await condition(() => canceled, wait);
      if (canceled) return 'canceled';
      const snapshot = await snapshotCampaign(workspaceId, campaignId);
      if (snapshot.state === 'stopped') return snapshot.status;
      if (snapshot.state === 'ready') return 0;
      scheduledAt = snapshot.scheduledAt;
    }
  }

  const started = input.cursor ?? (await start());
  if (typeof started === 'string') return started;
  let cursor = started;
  for (let slice = 1; ; slice += 1) {
    if (canceled) return 'canceled';
    const seen = wakeups;
    const fed = await feedCampaign({ workspaceId, campaignId, cursor });
    cursor = fed.cursor;
    if (fed.state === 'done') return fed.status;
    if (fed.state === 'waiting' && fed.nextAt) {
      // Until the next recipient's local time comes; a pause, resume or cancel looks at once.
      const wait = Date.parse(fed.nextAt) - Date.now();
      if (wait > 0) await condition(() => wakeups !== seen, wait);
    }
    if (fed.state === 'paused') {
      const held = await holdCampaignMessages(workspaceId, campaignId);
      if (held !== null) cursor = Math.min(cursor, held);
      await condition(() => wakeups !== seen, PAUSED_RECHECK);
    }
    if (slice >= SLICES_PER_RUN || workflowInfo().continueAsNewSuggested) {
      await continueAsNew<typeof campaignWorkflow>({ workspaceId, campaignId, scheduledAt: input.scheduledAt, cursor });
    }
  }
}
