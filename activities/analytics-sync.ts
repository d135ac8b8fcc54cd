import { ApplicationFailure, Context } from '@temporalio/activity';
import type { Sequelize } from 'sequelize';
import { type AnalyticsConnector, ConnectorError } from '../core/analytics/connector';
import { type AnalyticsSource, type AnalyticsSyncRequest, resolveSyncWindow, SYNC_FAILURE_TYPES, type SyncWindowTimes } from '../core/analytics/sync';
import { ATTACHMENT_LIMITS } from '../core/attachments';
import { type Keyring, openSecret } from '../core/secrets';
import type { BlobStore } from '../db/blob-store';
import { advanceAnalyticsSync, findAnalyticsConnection, finishAnalyticsSync, markAnalyticsSyncRunning } from '../db/repositories/analytics-connections';
import { recordAnalyticsConversions } from '../db/repositories/analytics-conversions';
import { findAttachment } from '../db/repositories/attachments';
import { csvConnector } from '../providers/analytics-csv/connector';
import { matomoConnector } from '../providers/matomo/connector';
import { exchangePublic, type PublicFetchOptions } from '../infra/public-fetch';

export interface AnalyticsSyncDeps {
  db: Sequelize;
  keyring: Keyring;
  blobs: BlobStore;
  /** Options of the SSRF-safe fetcher Matomo is called through (tests allow a local stand-in). */
  fetch: Partial<PublicFetchOptions>;
}

export interface SyncPageInput {
  workspaceId: string;
  source: AnalyticsSource;
  window: SyncWindowTimes;
  cursor: string | null;
}

const notConfigured = () =>
  ApplicationFailure.nonRetryable('No analytics connection is configured (PUT /integrations/analytics)', SYNC_FAILURE_TYPES.not_configured);

/**
 * A connector's failure as the sync's: a refusal or bad data is final (nonretryable); an outage is
 * retried by the page's retry policy, then ends the sync with its reason.
 */
function syncFailure(error: ConnectorError): ApplicationFailure {
  const type = SYNC_FAILURE_TYPES[error.kind];
  return error.kind === 'unavailable' ? ApplicationFailure.retryable(error.message, type) : ApplicationFailure.nonRetryable(error.message, type);
}

/**
 * The analytics sync's steps (workflows/analytics-sync.ts). Each page is read from the connector and
 * recorded in one activity, so rows never travel through workflow history, and committed in one
 * transaction with the cursor and the running count.
 */
export function createAnalyticsSyncActivities(deps: AnalyticsSyncDeps) {
  const { db } = deps;

  /** The connector for the source, chosen here once (never a switch further in). */
  async function connectorFor(workspaceId: string, source: AnalyticsSource): Promise<AnalyticsConnector> {
    if (source.kind === 'csv') {
      return csvConnector(async () => {
        const attachment = await findAttachment(db, workspaceId, source.attachmentId);
        const bytes = attachment?.status === 'ready' ? await deps.blobs.get(attachment.storageKey, ATTACHMENT_LIMITS.fileBytes) : null;
        if (!bytes) throw new ConnectorError('invalid', 'The uploaded file is gone (deleted, or never uploaded)');
        return bytes;
      });
    }
    const connection = await findAnalyticsConnection(db, workspaceId);
    if (!connection) throw notConfigured();
    return matomoConnector(
      {
        baseUrl: connection.baseUrl,
        siteId: connection.siteId,
        tokenAuth: openSecret(deps.keyring, { workspaceId, column: 'analytics_connections.token' }, connection.tokenSealed),
        currency: connection.currency,
        goalNames: connection.goalNames,
      },
      // The fetcher's options (a test's stand-in) win over the connector's own limits, as they always did.
      (url, request, limits) => exchangePublic(url, request, { ...limits, ...deps.fetch }),
    );
  }

  return {
    /** Marks the connection's sync running and fixes the window (now, the cursor) once for every page. */
    async beginAnalyticsSync(request: AnalyticsSyncRequest): Promise<SyncWindowTimes> {
      if (request.source.kind === 'csv') return resolveSyncWindow(request, null, new Date());
      const connection = await findAnalyticsConnection(db, request.workspaceId);
      if (!connection || !(await markAnalyticsSyncRunning(db, request.workspaceId))) throw notConfigured();
      return resolveSyncWindow(request, connection.syncCursor, new Date());
    },

    async syncAnalyticsPage(input: SyncPageInput): Promise<{ imported: number; nextCursor: string | null }> {
      const context = Context.current();
      context.heartbeat();
      const connector = await connectorFor(input.workspaceId, input.source);
      const window = { since: input.window.since ? new Date(input.window.since) : null, until: input.window.until ? new Date(input.window.until) : null };
      const page = await connector.fetchConversions(window, input.cursor).catch((error: unknown) => {
        throw error instanceof ConnectorError ? syncFailure(error) : error;
      });
      context.heartbeat();
      const imported = await db.transaction(async (transaction) => {
        const count = await recordAnalyticsConversions(db, input.workspaceId, page.conversions, transaction);
        if (input.source.kind === 'matomo') await advanceAnalyticsSync(db, input.workspaceId, { watermark: page.watermark, imported: count }, transaction);
        return count;
      });
      return { imported, nextCursor: page.nextCursor };
    },

    /** The sync's end state, kept on the connection for GET /integrations/analytics (a CSV sync has none to keep). */
    async finishAnalyticsSync(input: { workspaceId: string; source: AnalyticsSource; error: string | null }): Promise<void> {
      if (input.source.kind !== 'matomo') return;
      await finishAnalyticsSync(db, input.workspaceId, { status: input.error === null ? 'succeeded' : 'failed', error: input.error });
    },
  };
}

export type AnalyticsSyncActivities = ReturnType<typeof createAnalyticsSyncActivities>;
