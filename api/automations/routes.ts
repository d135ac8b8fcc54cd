import { LinkStatListSchema } from '../http/message-schemas';
import { linkStatsView } from '../http/message-views';
import { InputErrorSchema } from '../http/openapi';
import { created, ok, type RouteTable } from '../http/route';
import type { EnrollmentService } from './enrollment';
import type { AutomationLinks } from './links';
import type { AutomationStats } from './stats';
import type { AutomationSimulation } from './simulation';
import { SimulateBody, SimulationResultSchema } from './simulation-schemas';
import {
  AutomationCreatedSchema,
  AutomationDetailSchema,
  AutomationEnrollBody,
  AutomationEnrollQueuedSchema,
  AutomationListQuery,
  AutomationListSchema,
  AutomationParams,
  AutomationStatsSchema,
  AutomationStatusSchema,
  CreateAutomationBody,
  EnrollmentListQuery,
  EnrollmentListSchema,
  EnrollmentParams,
  EnrollmentSchema,
  UpdateAutomationBody,
} from './schemas';
import type { AutomationService } from './service';
import { automationDetailView, automationStatsView, automationSummaryView, enrollmentView } from './views';

const NOT_FOUND = { description: 'No such automation' };
const NOT_NOW = { description: 'conflict: the automation is not in a status that allows this' };
const INVALID = { description: 'Invalid fields, or a graph that cannot run: the field names the node (graph.nodes[i]...)', schema: InputErrorSchema };

export interface AutomationRouteServices {
  automations: AutomationService;
  enrollments: EnrollmentService;
  simulation: AutomationSimulation;
  links: AutomationLinks;
  stats: AutomationStats;
}

export function automationRoutes(routes: RouteTable, { automations, enrollments, simulation, links, stats }: AutomationRouteServices): void {
  const detail = async (workspaceId: string, automationId: string) => {
    const { automation, current } = await automations.detail(workspaceId, automationId);
    return ok(automationDetailView(automation, current));
  };

  routes.get('/automations', 'automations:read', {
    summary: 'List automations, newest first',
    query: AutomationListQuery,
    responses: { 200: { description: 'Automations', schema: AutomationListSchema } },
    handle: async ({ principal, query }) => {
      const { rows, total } = await automations.list(principal.workspaceId, query);
      return ok({ automations: rows.map(automationSummaryView), total, limit: query.limit, offset: query.offset });
    },
  });

  routes.post('/automations', 'automations:write', {
    summary: 'Create an automation (a journey graph) as a draft; activate publishes it',
    body: CreateAutomationBody,
    responses: { 201: { description: 'The draft', schema: AutomationCreatedSchema }, 422: INVALID },
    handle: async ({ principal, body }) => {
      const automation = await automations.create(principal.workspaceId, body);
      return created({ id: automation.id, versionId: automation.draftVersionId, status: 'draft' });
    },
  });

  routes.get('/automations/:id', 'automations:read', {
    summary: 'An automation: its draft, its current version\'s graph and its active enrollments',
    params: AutomationParams,
    responses: { 200: { description: 'The automation', schema: AutomationDetailSchema }, 404: NOT_FOUND },
    handle: async ({ principal, params }) => detail(principal.workspaceId, params.id),
  });

  routes.patch('/automations/:id', 'automations:write', {
    summary: 'Edit the draft (only the fields present change); running enrollments keep their version',
    params: AutomationParams,
    body: UpdateAutomationBody,
    responses: { 200: { description: 'The automation', schema: AutomationDetailSchema }, 404: NOT_FOUND, 409: NOT_NOW, 422: INVALID },
    handle: async ({ principal, params, body }) => {
      await automations.update(principal.workspaceId, params.id, body);
      return detail(principal.workspaceId, params.id);
    },
  });

  routes.post('/automations/:id/activate', 'automations:write', {
    summary: 'Publish the draft as a new immutable version (unless unchanged) and make the automation active',
    params: AutomationParams,
    responses: { 200: { description: 'Active', schema: AutomationStatusSchema }, 404: NOT_FOUND, 409: NOT_NOW, 422: INVALID },
    handle: async ({ principal, params }) => ok(await automations.activate(principal.workspaceId, params.id)),
  });

  routes.post('/automations/:id/pause', 'automations:write', {
    summary: 'Pause: nobody is enrolled until it is activated again; running enrollments go on',
    params: AutomationParams,
    responses: { 200: { description: 'Paused', schema: AutomationStatusSchema }, 404: NOT_FOUND, 409: NOT_NOW },
    handle: async ({ principal, params }) => ok(await automations.pause(principal.workspaceId, params.id)),
  });

  routes.post('/automations/:id/archive', 'automations:write', {
    summary: 'Archive: its active enrollments end (exited, archived) at their next step',
    params: AutomationParams,
    responses: { 200: { description: 'Archived', schema: AutomationStatusSchema }, 404: NOT_FOUND, 409: NOT_NOW },
    handle: async ({ principal, params }) => ok(await automations.archive(principal.workspaceId, params.id)),
  });

  routes.post('/automations/:id/enroll', 'automations:write', {
    summary: 'Enroll a list, a segment or up to 1,000 contacts; a contact already active in the automation is skipped',
    params: AutomationParams,
    body: AutomationEnrollBody,
    responses: {
      202: { description: 'Queued: a workflow enrolls the audience in pages', schema: AutomationEnrollQueuedSchema },
      404: { description: 'No such automation, list or segment' },
      409: { description: 'conflict: the automation is not active' },
      503: { description: 'The background workers cannot be reached; nothing was enrolled' },
    },
    handle: async ({ principal, params, body }) => ({ status: 202, body: await enrollments.enroll(principal.workspaceId, params.id, body) }),
  });

  routes.get('/automations/:id/enrollments', 'automations:read', {
    summary: 'The automation\'s enrollments, newest first, optionally of one status',
    params: AutomationParams,
    query: EnrollmentListQuery,
    responses: { 200: { description: 'Enrollments', schema: EnrollmentListSchema }, 404: NOT_FOUND },
    handle: async ({ principal, params, query }) => {
      const { rows, total } = await enrollments.list(principal.workspaceId, params.id, query);
      return ok({ data: rows.map(enrollmentView), total, limit: query.limit, offset: query.offset });
    },
  });

  routes.post('/automations/:id/enrollments/:enrollmentId/exit', 'automations:write', {
    summary: 'End an active enrollment (exited, manual)',
    params: EnrollmentParams,
    responses: { 200: { description: 'The enrollment, exited', schema: EnrollmentSchema }, 404: { description: 'No such automation or enrollment' }, 409: { description: 'conflict: the enrollment already ended' } },
    handle: async ({ principal, params }) => ok(enrollmentView(await enrollments.exit(principal.workspaceId, params.id, params.enrollmentId))),
  });

  routes.post('/automations/:id/simulate', 'automations:write', {
    cost: 'heavy',
    summary: 'Run the journey for one contact (or a synthetic one) under a fake clock: the path, the rendered messages and the outcome, nothing sent',
    params: AutomationParams,
    body: SimulateBody,
    responses: {
      200: { description: 'What the journey would do', schema: SimulationResultSchema },
      404: { description: 'No such automation or contact' },
      422: { description: 'Invalid body, no published version for version current, or a draft that cannot run', schema: InputErrorSchema },
    },
    handle: async ({ principal, params, body }) => ok(await simulation.simulate(principal.workspaceId, params.id, body)),
  });

  routes.get('/automations/:id/links', 'automations:read', {
    summary: 'Per-link click statistics of the automation\'s messages (human clicks counted, machine clicks reported)',
    params: AutomationParams,
    responses: { 200: { description: 'Links, most unique clicks first', schema: LinkStatListSchema }, 404: NOT_FOUND },
    handle: async ({ principal, params }) => ok(linkStatsView(await links.links(principal.workspaceId, params.id))),
  });

  routes.get('/automations/:id/stats', 'automations:read', {
    summary: 'Counters per journey node, every version together: message steps skipped at run time, by reason',
    params: AutomationParams,
    responses: { 200: { description: 'The current version\'s nodes in graph order, then nodes only earlier versions had', schema: AutomationStatsSchema }, 404: NOT_FOUND },
    handle: async ({ principal, params }) => ok(automationStatsView(params.id, await stats.stats(principal.workspaceId, params.id))),
  });
}
