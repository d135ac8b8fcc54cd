import type { Sequelize } from 'sequelize';
import { ValidationErrorSchema } from '../http/openapi';
import { ok, type RouteTable } from '../http/route';
import { UsageQuery, UsageSnapshotSchema } from './schemas';
import { usageSnapshot } from './service';

/** `inboundQuotaBytes`: INBOUND_STORAGE_QUOTA_BYTES, shown beside what the workspace's received mail takes. */
export function usageRoutes(routes: RouteTable, db: Sequelize, inboundQuotaBytes: number): void {
  routes.get('/usage', 'any-key', {
    summary: 'Usage of the monthly message quota against the plan: by channel, by kind and by day; received mail against its storage quota',
    query: UsageQuery,
    responses: {
      200: { description: 'The current period, or the month asked for', schema: UsageSnapshotSchema },
      422: { description: 'period is not a month as YYYY-MM, or a month not begun yet', schema: ValidationErrorSchema },
    },
    handle: async ({ principal, query }) => ok(await usageSnapshot(db, principal.workspaceId, principal.plan, new Date(), query.period, inboundQuotaBytes)),
  });
}
