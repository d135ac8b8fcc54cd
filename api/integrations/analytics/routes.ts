import { ok, type RouteTable } from '../../http/route';
import {
  AnalyticsConnectionSchema,
  AnalyticsSyncBody,
  AnalyticsSyncParams,
  AnalyticsSyncResultSchema,
  AnalyticsSyncRunningSchema,
  AnalyticsSyncStatusSchema,
  SaveAnalyticsConnectionBody,
} from './schemas';
import type { AnalyticsIntegrationService } from './service';
import { analyticsConnectionView } from './views';

export function analyticsIntegrationRoutes(routes: RouteTable, analytics: AnalyticsIntegrationService): void {
  routes.put('/integrations/analytics', 'integrations:write', {
    summary: 'Connect the workspace\'s analytics product (Matomo): checks the token with it, stores the token encrypted',
    body: SaveAnalyticsConnectionBody,
    responses: {
      200: { description: 'Connected (the token is never shown again)', schema: AnalyticsConnectionSchema },
      422: { description: 'Invalid body, a base URL that is not https or not public (baseUrl), or Matomo refused the token or site (tokenAuth)' },
      502: { description: 'upstream_error: Matomo could not be reached or answered with an error' },
    },
    handle: async ({ principal, body }) => ok(analyticsConnectionView(await analytics.save(principal.workspaceId, body))),
  });

  routes.get('/integrations/analytics', ['integrations:write', 'utm:read'], {
    summary: 'The workspace\'s analytics connection and its last sync, without the token',
    responses: { 200: { description: 'The connection, or { configured: false }', schema: AnalyticsConnectionSchema } },
    handle: async ({ principal }) => ok(analyticsConnectionView(await analytics.get(principal.workspaceId))),
  });

  routes.delete('/integrations/analytics', 'integrations:write', {
    summary: 'Disconnect the analytics product and forget its token (recorded conversions stay)',
    responses: {
      200: { description: 'Disconnected', schema: AnalyticsConnectionSchema },
      404: { description: 'No analytics connection is configured' },
    },
    handle: async ({ principal }) => {
      await analytics.remove(principal.workspaceId);
      return ok(analyticsConnectionView(null));
    },
  });

  routes.post('/integrations/analytics/sync', 'integrations:write', {
    cost: 'heavy',
    summary: 'Launches a conversion sync from the analytics connector (or from an uploaded CSV) and answers how many conversions it recorded',
    body: AnalyticsSyncBody,
    responses: {
      200: { description: 'The sync finished: conversions newly recorded (a repeat of the same rows imports 0)', schema: AnalyticsSyncResultSchema },
      202: {
        description: 'The sync runs on after 6 s: conversions recorded so far, and its status URL (also in Location), which reports imported when it is done',
        schema: AnalyticsSyncRunningSchema,
      },
      409: { description: 'No analytics connection is configured and no attachmentId was given' },
      422: { description: 'Invalid body, an unknown or not uploaded attachmentId, or a CSV row that breaks a rule (attachmentId, with its line)' },
      502: { description: 'upstream_error: Matomo refused the token or the site, failed or timed out (the reason is also kept on the connection)' },
      503: { description: 'The sync could not be started (Temporal unreachable)' },
    },
    handle: async ({ principal, body }) => {
      const { imported, done, syncId } = await analytics.sync(principal.workspaceId, body);
      if (done) return ok({ imported });
      const statusUrl = `/api/v1/integrations/analytics/syncs/${syncId}`;
      return { status: 202, headers: { location: statusUrl }, body: { imported, status: 'running', syncId, statusUrl } };
    },
  });

  routes.get('/integrations/analytics/syncs/:syncId', ['integrations:write', 'utm:read'], {
    summary: 'Where a sync that outlasted its request stands: running with the count so far, succeeded with imported, or failed with its reason',
    params: AnalyticsSyncParams,
    responses: {
      200: { description: 'The sync\'s status', schema: AnalyticsSyncStatusSchema },
      404: { description: 'No sync with this id in the workspace (or past Temporal\'s retention)' },
      503: { description: 'Temporal, which holds the sync, cannot be reached' },
    },
    handle: async ({ principal, params }) => ok(await analytics.syncStatus(principal.workspaceId, params.syncId)),
  });
}
