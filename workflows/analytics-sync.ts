import { ActivityFailure, ApplicationFailure, continueAsNew, defineQuery, proxyActivities, setHandler, workflowInfo } from '@temporalio/workflow';
import type { AnalyticsSyncActivities } from '../activities/analytics-sync';
import type { AnalyticsSyncRequest, SyncWindowTimes } from '../core/analytics/sync';
import { siblingQueue } from '../core/task-queues';

/**
 * A page reads the analytics product (20 s per call at most) and records up to a few hundred conversions.
 * An outage of the product is tried three times over a few seconds, then ends the sync with its reason
 * (the next sync starts from the committed cursor); a refusal or bad data ends it at once.
 */
const pageActivities = () =>
  proxyActivities<AnalyticsSyncActivities>({
    // The `bulk` queue beside the workflow's: its own few slots, never the control plane's.
    taskQueue: siblingQueue(workflowInfo().taskQueue, 'control', 'bulk'),
    startToCloseTimeout: '2 minutes',
    heartbeatTimeout: '1 minute',
    retry: { initialInterval: '1 second', backoffCoefficient: 2, maximumAttempts: 3 },
  });

/** Only our database: retried until it answers, so every sync reaches an end state. */
const { beginAnalyticsSync, finishAnalyticsSync } = proxyActivities<AnalyticsSyncActivities>({
  startToCloseTimeout: '30 seconds',
  retry: { initialInterval: '1 second', backoffCoefficient: 2, maximumInterval: '1 minute', nonRetryableErrorTypes: ['AnalyticsNotConfigured'] },
});

/** History stays small: a new run after this many pages, carrying the window, cursor and count. */
const PAGES_PER_RUN = 200;

export interface AnalyticsSyncInput extends AnalyticsSyncRequest {
  /** Set by continue-as-new: where the previous run stopped. */
  carried?: { window: SyncWindowTimes; cursor: string; imported: number };
}

export interface AnalyticsSyncResult {
  imported: number;
}

/** How many conversions the sync has recorded so far (POST /integrations/analytics/sync answers it when the sync outlasts the request). */
export const analyticsSyncProgressQuery = defineQuery<AnalyticsSyncResult>('analyticsSyncProgress');

/** The failure's own message and type, without Temporal's wrapping (what the API and the connection show). */
function reasonOf(error: unknown): ApplicationFailure {
  const cause = error instanceof ActivityFailure ? error.cause : error;
  if (cause instanceof ApplicationFailure) return ApplicationFailure.nonRetryable(cause.message, cause.type ?? 'AnalyticsSyncFailed');
  return ApplicationFailure.nonRetryable(cause instanceof Error ? cause.message : String(cause), 'AnalyticsSyncFailed');
}

/**
 * One conversion sync (id `analytics-sync:<workspaceId>`, or `...:csv:<attachmentId>` for an upload; on the
 * control queue): fixes the window, then reads and records a page at a time until the connector has no
 * more, and records the end state on the connection. Returns the number of conversions newly recorded.
 */
export async function analyticsSyncWorkflow(input: AnalyticsSyncInput): Promise<AnalyticsSyncResult> {
  const { syncAnalyticsPage } = pageActivities();
  let imported = input.carried?.imported ?? 0;
  setHandler(analyticsSyncProgressQuery, () => ({ imported }));
  let window: SyncWindowTimes;
  let cursor: string | null = input.carried?.cursor ?? null;
  let pages = 0;
  try {
    window = input.carried?.window ?? (await beginAnalyticsSync(input));
    for (;;) {
      const page = await syncAnalyticsPage({ workspaceId: input.workspaceId, source: input.source, window, cursor });
      imported += page.imported;
      cursor = page.nextCursor;
      pages += 1;
      if (cursor === null || pages >= PAGES_PER_RUN) break;
    }
  } catch (error) {
    const failure = reasonOf(error);
    if (failure.type !== 'AnalyticsNotConfigured') await finishAnalyticsSync({ workspaceId: input.workspaceId, source: input.source, error: failure.message });
    throw failure;
  }
  if (cursor !== null) {
    return continueAsNew<typeof analyticsSyncWorkflow>({ ...input, carried: { window, cursor, imported } });
  }
  await finishAnalyticsSync({ workspaceId: input.workspaceId, source: input.source, error: null });
  return { imported };
}
