import { z } from 'zod';
import { LinkStatListSchema } from '../emails/schemas';
import { linkStatsView } from '../emails/views';
import { InputErrorSchema } from '../http/openapi';
import { ok, type RouteTable } from '../http/route';
import type { AutomationLinks } from './links';
import type { AutomationSimulation } from './simulation';
import { SimulateBody, SimulationResultSchema } from './simulation-schemas';

const AutomationParams = z.object({ id: z.uuid() });
const NOT_FOUND = { description: 'No such automation' };

/**
 * The simulate and links routes of automations, written apart while api/automations/routes.ts is built
 * in parallel: these two lines belong in its table.
 */
export function automationSimulationRoutes(routes: RouteTable, automations: { simulation: AutomationSimulation; links: AutomationLinks }): void {
  routes.post('/automations/:id/simulate', 'automations:write', {
    summary: 'Run the journey for one contact (or a synthetic one) under a fake clock: the path, the rendered messages and the outcome, nothing sent',
    params: AutomationParams,
    body: SimulateBody,
    responses: {
      200: { description: 'What the journey would do', schema: SimulationResultSchema },
      404: { description: 'No such automation or contact' },
      422: { description: 'Invalid body, no published version for version current, or a draft that cannot run', schema: InputErrorSchema },
    },
    handle: async ({ principal, params, body }) => ok(await automations.simulation.simulate(principal.workspaceId, params.id, body)),
  });

  routes.get('/automations/:id/links', 'automations:read', {
    summary: 'Per-link click statistics of the automation\'s messages (human clicks counted, machine clicks reported)',
    params: AutomationParams,
    responses: { 200: { description: 'Links, most unique clicks first', schema: LinkStatListSchema }, 404: NOT_FOUND },
    handle: async ({ principal, params }) => ok(linkStatsView(await automations.links.links(principal.workspaceId, params.id))),
  });
}
