import type { Client } from '@temporalio/client';
import { startCampaignWorkflow } from './campaigns';
import { journeyControl } from './journeys';
import { workflowVerdict } from './workflow-status';

/**
 * The client side of activities/ports.ts `TemporalPorts`: what activities may ask of Temporal, over one
 * client. Matched structurally where workers/ hands it to createActivities (temporal/ imports no activity
 * code, so the type check happens at that wiring).
 */
export function temporalPorts(client: Client, taskQueuePrefix: string) {
  return {
    journeys: journeyControl(client, taskQueuePrefix),
    campaigns: {
      start: (campaign: { workspaceId: string; campaignId: string; scheduledAt: Date | null; cursor?: number }) =>
        startCampaignWorkflow(client, taskQueuePrefix, campaign),
    },
    workflows: { verdictOf: (workflowId: string) => workflowVerdict(client, workflowId) },
  };
}
