import { created, ok, type RouteTable } from '../http/route';
import {
  CreateSuppressionBody,
  SuppressionDeletedSchema,
  SuppressionListQuery,
  SuppressionListSchema,
  SuppressionParams,
  SuppressionUpsertedSchema,
} from './schemas';
import type { SuppressionService } from './service';
import { suppressionView } from './views';

export function suppressionRoutes(routes: RouteTable, suppressions: SuppressionService): void {
  routes.get('/suppressions', 'contacts:read', {
    summary: 'The workspace\'s suppression list, newest first',
    query: SuppressionListQuery,
    responses: { 200: { description: 'One page', schema: SuppressionListSchema } },
    handle: async ({ principal, query }) => {
      const { rows, total } = await suppressions.list(principal.workspaceId, query);
      return ok({ data: rows.map(suppressionView), total, limit: query.limit, offset: query.offset });
    },
  });

  routes.post('/suppressions', 'contacts:write', {
    summary: 'Suppress an address: nothing is sent to it until the suppression is deleted',
    body: CreateSuppressionBody,
    responses: {
      201: { description: 'Suppressed', schema: SuppressionUpsertedSchema },
      200: { description: 'Already suppressed (created false, first reason kept)', schema: SuppressionUpsertedSchema },
    },
    handle: async ({ principal, body }) => {
      const { suppression, created: isNew } = await suppressions.add(principal.workspaceId, body);
      const reply = { ...suppressionView(suppression), created: isNew };
      return isNew ? created(reply) : ok(reply);
    },
  });

  routes.delete('/suppressions/:address', 'contacts:write', {
    summary: 'Lift the suppression of an address (an erased contact\'s address can then be added again)',
    params: SuppressionParams,
    responses: { 200: { description: 'Lifted', schema: SuppressionDeletedSchema }, 404: { description: 'The address is not suppressed' } },
    handle: async ({ principal, params }) => ok({ deleted: true, ...(await suppressions.remove(principal.workspaceId, params.address)) }),
  });
}
