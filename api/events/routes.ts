import type { RouteTable } from '../http/route';
import { EventAcceptedSchema, EventBody } from './schemas';
import type { EventService } from './service';

export function eventRoutes(routes: RouteTable, events: EventService): void {
  routes.post('/events', 'events:write', {
    summary: 'Send a behavioural event of a contact: stored, then it triggers automations and reaches running journeys (goals, wait_for_event)',
    body: EventBody,
    responses: {
      202: { description: 'Stored and matched: the enrollments it started and the goals it completed', schema: EventAcceptedSchema },
      200: { description: 'A repeat of an idempotencyKey: the first event\'s id, status duplicate, nothing done', schema: EventAcceptedSchema },
      404: { description: 'No such contact' },
    },
    handle: async ({ principal, body }) => events.ingest(principal.workspaceId, body, new Date()),
  });
}
