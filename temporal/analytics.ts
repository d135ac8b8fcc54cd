import { type Client, type WorkflowHandle, WorkflowFailedError, WorkflowNotFoundError } from '@temporalio/client';
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

/** Where one sync stands, as its status URL reports it. `imported` is null only when a failed sync's count cannot be read. */
export type AnalyticsSyncState =
  | { status: 'running' | 'succeeded'; imported: number; error: null }
  | { status: 'failed'; imported: number | null; error: string };

/** Continue-as-new hops followed at most (one every 200 pages: far more pages than any sync has). */
const MAX_RUNS_FOLLOWED = 50;
// temporal.api.enums.v1.HistoryEventFilterType.HISTORY_EVENT_FILTER_TYPE_CLOSE_EVENT: only the run's last event.
const CLOSE_EVENT_ONLY = 2;

/**
 * The sync that `runId` answered for, followed through its continue-as-new runs to the one that runs now
 * or ended it: its progress while running, its result once done. Each step reads one run (never a long
 * poll), so the status route answers at once. Null when no such run exists for this workflow id (another
 * workspace's sync id, or one past Temporal's retention).
 */
export async function analyticsSyncState(client: Client, workflowId: string, runId: string): Promise<AnalyticsSyncState | null> {
  let current = runId;
  for (let hop = 0; hop < MAX_RUNS_FOLLOWED; hop += 1) {
    const handle = client.workflow.getHandle<typeof analyticsSyncWorkflow>(workflowId, current, { followRuns: false });
    let status: string;
    try {
      status = (await handle.describe()).status.name;
    } catch (error) {
      if (error instanceof WorkflowNotFoundError) return null;
      throw error;
    }
    if (status === 'RUNNING') return { status: 'running', imported: (await handle.query(analyticsSyncProgressQuery)).imported, error: null };
    if (status === 'COMPLETED') return { status: 'succeeded', imported: (await handle.result()).imported, error: null };
    if (status !== 'CONTINUED_AS_NEW') return { status: 'failed', imported: await closedProgress(handle), error: await failureOf(handle, status) };
    const history = await client.workflowService.getWorkflowExecutionHistory({
      namespace: client.options.namespace,
      execution: { workflowId, runId: current },
      historyEventFilterType: CLOSE_EVENT_ONLY,
    });
    const next = history.history?.events?.at(-1)?.workflowExecutionContinuedAsNewEventAttributes?.newExecutionRunId;
    if (!next) return null;
    current = next;
  }
  return null;
}

/** What a failed run said (the connector's refusal, bad rows), or how it was ended (terminated, timed out). */
async function failureOf(handle: WorkflowHandle<typeof analyticsSyncWorkflow>, status: string): Promise<string> {
  try {
    await handle.result();
  } catch (error) {
    if (error instanceof WorkflowFailedError && error.cause) return error.cause.message;
  }
  return `The sync ended: ${status.toLowerCase()}`;
}

/** A closed run's count, read by a query a worker answers by replaying it; null if no worker answers in time. */
async function closedProgress(handle: WorkflowHandle<typeof analyticsSyncWorkflow>): Promise<number | null> {
  const answer = handle.query(analyticsSyncProgressQuery).then((progress) => progress.imported);
  answer.catch(() => undefined);
  return Promise.race([answer, new Promise<null>((resolve) => setTimeout(() => resolve(null), 2_000).unref())]).catch(() => null);
}
