import type { Sequelize } from 'sequelize';
import { campaignWorkflowId, sendWorkflowId } from '../core/ids';
import { inLanes } from '../core/lanes';
import { findStaleCampaigns, postponeCampaignReconcile } from '../db/repositories/campaign-reconcile';
import { failMessage } from '../db/repositories/message-delivery';
import { findStaleUnfinished, postponeReconcile, redispatch } from '../db/repositories/message-reconcile';
import type { CampaignStarts, WorkflowLookup } from './ports';
import type { SendObserver } from './send-observer';

export interface ReconcilerDeps {
  db: Sequelize;
  /** Temporal's answer about a workflow (a port: activities/ports.ts). */
  workflows: WorkflowLookup;
  /** Restarts a campaign's workflow (a port: activities/ports.ts). */
  campaigns: CampaignStarts;
  observer: SendObserver;
}

export interface ReconcileOptions {
  /** A message that has not moved for this long is looked at. */
  staleAfterMs: number;
  /** How many messages one round looks at. */
  limit: number;
  /** A message whose workflow still runs is looked at again after this long. */
  recheckAfterMs: number;
}

export interface ReconcileReport {
  checked: number;
  running: number;
  failed: number;
  redispatched: number;
}

/** Workflow descriptions asked for at once: enough to finish a round quickly, few enough for a shared server. */
const CONCURRENT_DESCRIBES = 8;

export function createReconcilerActivities(deps: ReconcilerDeps) {
  const { db, observer } = deps;
  const verdictOf = (workflowId: string) => deps.workflows.verdictOf(workflowId);

  return {
    /**
     * One round of the reconciler: finds dispatched messages still waiting long after their last change
     * and asks Temporal about their send workflow. Running: left alone for a while. Closed (terminated
     * or canceled from the UI, failed, timed out, or completed without recording an outcome): the message
     * ends `failed` with the reason, its quota given back. Missing (the workflow history is gone): handed
     * back to the outbox, which starts a new one.
     */
    async reconcileMessages(options: ReconcileOptions): Promise<ReconcileReport> {
      const stale = await findStaleUnfinished(db, options);
      const report: ReconcileReport = { checked: stale.length, running: 0, failed: 0, redispatched: 0 };
      const running: string[] = [];
      await inLanes(stale, CONCURRENT_DESCRIBES, async (message) => {
        const verdict = await verdictOf(message.workflowId ?? sendWorkflowId(message.messageId));
        if (verdict.kind === 'running') {
          running.push(message.messageId);
        } else if (verdict.kind === 'missing') {
          if (await redispatch(db, message.workspaceId, message.messageId)) {
            report.redispatched += 1;
            observer.repaired('redispatched', message.workspaceId, message.messageId, 'its send workflow does not exist');
          }
        } else {
          const reason = `the send workflow ended ${verdict.status.toLowerCase().replace(/_/g, ' ')} before the message was sent`;
          if (await failMessage(db, message.workspaceId, message.messageId, reason, { workflowStatus: verdict.status })) {
            report.failed += 1;
            observer.repaired('failed', message.workspaceId, message.messageId, reason);
          }
        }
      });
      await postponeReconcile(db, running, options.recheckAfterMs);
      report.running = running.length;
      return report;
    },

    /**
     * The same for campaigns: an unfinished campaign (scheduled, sending, paused) that has not changed for
     * a while and whose `campaign:<id>` workflow closed (terminated from the Temporal UI) or vanished gets
     * a new run, from its snapshot's mark when it has one: the campaign row is the truth, and pages written
     * again insert nothing twice. Returns how many were looked at and how many restarted.
     */
    async reconcileCampaigns(options: ReconcileOptions): Promise<{ checked: number; restarted: number }> {
      const stale = await findStaleCampaigns(db, options);
      const running: string[] = [];
      let restarted = 0;
      await inLanes(stale, CONCURRENT_DESCRIBES, async (campaign) => {
        const verdict = await verdictOf(campaignWorkflowId(campaign.campaignId));
        if (verdict.kind === 'running') {
          running.push(campaign.campaignId);
          return;
        }
        await deps.campaigns.start({ ...campaign, cursor: campaign.cursor ?? undefined });
        restarted += 1;
        const why = verdict.kind === 'missing' ? 'its workflow does not exist' : `its workflow ended ${verdict.status.toLowerCase().replace(/_/g, ' ')}`;
        observer.repaired('campaign_restarted', campaign.workspaceId, campaign.campaignId, why);
      });
      await postponeCampaignReconcile(db, running, options.recheckAfterMs);
      return { checked: stale.length, restarted };
    },
  };
}
