import type { AnalyticsConnectionRecord } from '../../../db/repositories/analytics-connections';
import type { AnalyticsConnectionView } from './schemas';

const iso = (date: Date | null) => (date ? date.toISOString() : null);

/** Never the token: what the connection reads and how its last sync went. */
export function analyticsConnectionView(connection: AnalyticsConnectionRecord | null): AnalyticsConnectionView {
  if (!connection) return { configured: false };
  const { lastSync } = connection;
  return {
    configured: true,
    provider: connection.provider,
    baseUrl: connection.baseUrl,
    siteId: connection.siteId,
    currency: connection.currency,
    goalNames: connection.goalNames,
    syncCursor: iso(connection.syncCursor),
    lastSync: lastSync && { status: lastSync.status, startedAt: iso(lastSync.startedAt), finishedAt: iso(lastSync.finishedAt), imported: lastSync.imported, error: lastSync.error },
  };
}
