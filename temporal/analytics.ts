import type { Client, WorkflowHandle } from '@temporalio/client';
import { type AnalyticsSyncRequest, analyticsSyncWorkflowId } from '../core/analytics/sync';
import { analyticsSyncProgressQuery, analyticsSyncWorkflow } from '../workflows/analytics-sync';
import { controlPlaneStart } from './control-plane';

/**
 * A conversion sync on the control plane's queue, fair between workspaces. A sync of the same source that
 * is already running is joined rather than started again (a double click gets the one sync's result); one
 * that has finished is run again (re-reading is free: conversions are recorded once by external id).
 */
export async function startAnalyticsSync(client: Client, taskQueuePrefix: string, request: AnalyticsSyncRequest) {
  return client.workflow.start(analyticsSyncWorkflow, {
    ...controlPlaneStart(taskQueuePrefix, request.workspaceId),
    workflowId: analyticsSyncWorkflowId(request.workspaceId, request.source),
    workflowIdConflictPolicy: 'USE_EXISTING',
    args: [request],
  });
}

/** How far a running sync has got (conversions recorded so far), for the 202 of a sync still running. */
export function analyticsSyncProgress(handle: WorkflowHandle<typeof analyticsSyncWorkflow>) {
  return handle.query(analyticsSyncProgressQuery);
}
