import type { Sequelize } from 'sequelize';
import { ok, type RouteTable } from '../http/route';
import { UsageSnapshotSchema } from './schemas';
import { usageSnapshot } from './service';

export function usageRoutes(routes: RouteTable, db: Sequelize): void {
  routes.get('/usage', 'any-key', {
    summary: 'Usage of the monthly message quota against the plan',
    responses: { 200: { description: 'The current period', schema: UsageSnapshotSchema } },
    handle: async ({ principal }) => ok(await usageSnapshot(db, principal.workspaceId, principal.plan, new Date())),
  });
}
