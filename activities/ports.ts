import type { JourneyControl } from '../services/journey-events';

/**
 * What activities ask of Temporal's client side, as ports: declared here, implemented in temporal/
 * (temporal/activity-ports.ts) and handed in where createActivities is called (workers/main.ts). Activities
 * never import temporal/ nor workflows/, so the workflow registry, which imports activities' types, closes
 * no import cycle through them.
 */

/** What Temporal says of a workflow the reconciler asks about. */
export type WorkflowVerdict = { kind: 'running' } | { kind: 'missing' } | { kind: 'closed'; status: string };

export interface WorkflowLookup {
  /** Running, closed (with Temporal's status name: TERMINATED, FAILED, ...) or missing (its history is gone). */
  verdictOf(workflowId: string): Promise<WorkflowVerdict>;
}

export interface CampaignStarts {
  /** (Re)starts a campaign's workflow from its snapshot's mark; a start that finds it running succeeded. */
  start(campaign: { workspaceId: string; campaignId: string; scheduledAt: Date | null; cursor?: number }): Promise<void>;
}

export interface TemporalPorts {
  /** Journey starts and event signals (automation enroll, the sweeper, inbound mail's events). */
  journeys: JourneyControl;
  /** The reconciler's restart of a campaign whose workflow closed or vanished. */
  campaigns: CampaignStarts;
  /** The reconciler's questions about send and campaign workflows. */
  workflows: WorkflowLookup;
}
