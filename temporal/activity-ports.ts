import { type Client, WorkflowNotFoundError } from '@temporalio/client';
import { startCampaignWorkflow } from './campaigns';
import { journeyControl } from './journeys';

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
    workflows: {
      async verdictOf(workflowId: string) {
        try {
          const description = await client.workflow.getHandle(workflowId).describe();
          return description.status.name === 'RUNNING' ? { kind: 'running' as const } : { kind: 'closed' as const, status: description.status.name };
        } catch (error) {
          if (error instanceof WorkflowNotFoundError) return { kind: 'missing' as const };
          throw error;
        }
      },
    },
  };
}
