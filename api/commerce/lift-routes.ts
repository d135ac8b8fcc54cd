import { ok, type RouteTable } from '../http/route';
import type { CampaignLift } from './lift';
import { CampaignLiftSchema, EntityParams } from './schemas';

// A report over orders and conversions: utm:read, like every commerce read (decisions.md).
export function liftRoutes(routes: RouteTable, lift: CampaignLift): void {
  routes.get('/campaigns/:id/lift', 'utm:read', {
    cost: 'search',
    summary: 'Conversions and revenue per recipient of those the campaign was sent to against its holdout, through the attribution window',
    params: EntityParams,
    responses: { 200: { description: 'The lift report', schema: CampaignLiftSchema }, 404: { description: 'No such campaign' } },
    handle: async ({ principal, params }) => ok(await lift.report(principal.workspaceId, params.id, new Date())),
  });
}
