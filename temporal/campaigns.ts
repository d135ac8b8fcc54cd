import type { Client } from '@temporalio/client';
import { TEMPORAL_PRIORITY } from '../core/dispatch';
import { campaignWorkflowId } from '../core/ids';
import { taskQueueName } from '../core/task-queues';
import { campaignWorkflow, cancelCampaignSignal, pauseCampaignSignal, resumeCampaignSignal } from '../workflows/campaign';
import { searchAttributes } from './search-attributes';
import { startOnce } from './start-once';

/** A campaign to (re)start: its schedule, and the snapshot's mark to go on from after a restart. */
export interface CampaignStart {
  workspaceId: string;
  campaignId: string;
  scheduledAt: Date | null;
  cursor?: number;
}

/**
 * A campaign's workflow, `campaign:<campaignId>`, on the default queue (it only touches our database; its
 * messages reach the provider through the dispatcher), at campaign priority with the workspace as its
 * fairness key. A campaign is sent once, which the draft → scheduled move in the database decides; the id
 * may be reused after a start that failed and was reverted to draft, and a start that finds it running
 * (a retry) succeeded.
 */
export async function startCampaignWorkflow(client: Client, taskQueuePrefix: string, campaign: CampaignStart): Promise<void> {
  await startOnce(() =>
    client.workflow.start(campaignWorkflow, {
      workflowId: campaignWorkflowId(campaign.campaignId),
      taskQueue: taskQueueName(taskQueuePrefix, 'default'),
      args: [{ workspaceId: campaign.workspaceId, campaignId: campaign.campaignId, scheduledAt: campaign.scheduledAt?.toISOString() ?? null, cursor: campaign.cursor }],
      workflowIdReusePolicy: 'ALLOW_DUPLICATE',
      priority: { priorityKey: TEMPORAL_PRIORITY.campaign, fairnessKey: campaign.workspaceId },
      typedSearchAttributes: searchAttributes({ WorkspaceId: campaign.workspaceId, CampaignId: campaign.campaignId, Kind: 'campaign' }),
    }),
  );
}

const CAMPAIGN_SIGNALS = { pause: pauseCampaignSignal, resume: resumeCampaignSignal, cancel: cancelCampaignSignal } as const;

/** Tells a campaign's workflow that the campaign changed (the database holds the change itself). */
export async function signalCampaign(client: Client, campaignId: string, signal: keyof typeof CAMPAIGN_SIGNALS): Promise<void> {
  await client.workflow.getHandle(campaignWorkflowId(campaignId)).signal(CAMPAIGN_SIGNALS[signal]);
}
