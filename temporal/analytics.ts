import { type Client, type WorkflowHandle, WorkflowFailedError, WorkflowNotFoundError } from '@temporalio/client';
import { type AnalyticsSyncRequest, analyticsSyncWorkflowId } from '../core/analytics/sync';
import { analyticsSyncProgressQuery, analyticsSyncWorkflow } from '../workflows/analytics-sync';
import { controlPlaneStart } from './control-plane';
import { withDeadline } from './deadline';

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

/**
 * Where one sync stands, as its status URL reports it. `imported` is null when the count cannot be read
 * right now: a running sync's count is asked of a worker, which may be busy or away.
 */
export type AnalyticsSyncState =
  | { status: 'running'; imported: number | null; error: null }
  | { status: 'succeeded'; imported: number; error: null }
  | { status: 'failed'; imported: number | null; error: string };

/** How long the status route waits for a worker to answer a sync's count. */
const PROGRESS_WAIT_MS = 2_000;

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
    if (status === 'RUNNING') return { status: 'running', imported: await progressOf(client, handle), error: null };
    if (status === 'COMPLETED') return { status: 'succeeded', imported: (await handle.result()).imported, error: null };
    if (status !== 'CONTINUED_AS_NEW') return { status: 'failed', imported: await progressOf(client, handle), error: await failureOf(handle, status) };
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

/**
 * A run's count, by the progress query a worker answers (a closed run's by replaying it); null when no
 * worker answers in time, so the status route never hangs on a worker that is away.
 */
async function progressOf(client: Client, handle: WorkflowHandle<typeof analyticsSyncWorkflow>): Promise<number | null> {
  try {
    return (await withDeadline(client, PROGRESS_WAIT_MS, () => handle.query(analyticsSyncProgressQuery))).imported;
  } catch {
    return null;
  }
}
