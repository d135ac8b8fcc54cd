import type { ConnectorFailureKind } from './connector';

/**
 * What a sync reads: the workspace's connection (Matomo), or an uploaded CSV. Shared by the API, the
 * workflow and its activities, so it is plain data.
 */
export type AnalyticsSource = { kind: 'matomo' } | { kind: 'csv'; attachmentId: string };

export interface AnalyticsSyncRequest {
  workspaceId: string;
  source: AnalyticsSource;
  /** ISO 8601 bounds given with the request; without them Matomo reads from its cursor to now, a CSV every row. */
  from?: string;
  until?: string;
}

/** The resolved window, in ISO 8601 (workflow payloads are JSON). */
export interface SyncWindowTimes {
  since: string | null;
  until: string | null;
}

/** A first Matomo sync, without `from`, reads this far back. */
export const FIRST_SYNC_DAYS = 30;
/**
 * A later sync starts this long before the cursor: a visit read while it was still going on can gain a
 * goal afterwards, and Matomo may file a conversion a moment after its visit's last action. Re-reading
 * costs nothing but the transfer: conversions are recorded once by their external id.
 */
export const CURSOR_OVERLAP_MS = 60 * 60 * 1000;

export function resolveSyncWindow(request: Pick<AnalyticsSyncRequest, 'source' | 'from' | 'until'>, cursor: Date | null, now: Date): SyncWindowTimes {
  if (request.source.kind === 'csv') return { since: request.from ?? null, until: request.until ?? null };
  const since = request.from
    ? new Date(request.from)
    : cursor
      ? new Date(cursor.getTime() - CURSOR_OVERLAP_MS)
      : new Date(now.getTime() - FIRST_SYNC_DAYS * 86_400_000);
  return { since: since.toISOString(), until: request.until ?? now.toISOString() };
}

/** The workflow id: one Matomo sync per workspace at a time; one run per uploaded CSV at a time. */
export function analyticsSyncWorkflowId(workspaceId: string, source: AnalyticsSource): string {
  return source.kind === 'csv' ? `analytics-sync:${workspaceId}:csv:${source.attachmentId}` : `analytics-sync:${workspaceId}`;
}

const UUID = '[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}';
const SYNC_ID = new RegExp(`^(?:matomo|csv\\.(${UUID}))\\.(${UUID})$`, 'i');

/**
 * The id of one sync as POST /integrations/analytics/sync hands it out (its status URL): the source and the
 * Temporal run that answered the request. The workspace is not in it: the status route takes it from the
 * key, so another workspace's id names nothing.
 */
export function analyticsSyncIdOf(source: AnalyticsSource, runId: string): string {
  return source.kind === 'csv' ? `csv.${source.attachmentId}.${runId}` : `matomo.${runId}`;
}

export function parseAnalyticsSyncId(syncId: string): { source: AnalyticsSource; runId: string } | null {
  const match = SYNC_ID.exec(syncId);
  if (!match) return null;
  const [, attachmentId, runId] = match;
  return { source: attachmentId ? { kind: 'csv', attachmentId: attachmentId.toLowerCase() } : { kind: 'matomo' }, runId: runId.toLowerCase() };
}

/** The ApplicationFailure types a sync fails with, so the API can answer each with its own code. */
export const SYNC_FAILURE_TYPES: Record<ConnectorFailureKind | 'not_configured', string> = {
  refused: 'AnalyticsRefused',
  unavailable: 'AnalyticsUnavailable',
  invalid: 'AnalyticsInvalidData',
  not_configured: 'AnalyticsNotConfigured',
};
