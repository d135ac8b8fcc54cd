import { ErrorSchema, InputErrorSchema } from '../http/openapi';
import { ok, type RouteTable } from '../http/route';
import { CreateImportBody, ImportJobListSchema, ImportJobSchema, ImportListQuery, ImportParams } from './schemas';
import type { ImportService } from './service';
import { importJobView } from './views';

const NOT_FOUND = { description: 'No such import' };

export function importRoutes(routes: RouteTable, imports: ImportService): void {
  routes.post('/imports', 'contacts:write', {
    cost: 'heavy',
    summary: 'Import contacts from a CSV file (an uploaded attachment or a public https URL), in the background',
    body: CreateImportBody,
    responses: {
      202: { description: 'Accepted: the ImportJob, queued', schema: ImportJobSchema },
      422: { description: 'Invalid body: an unknown mapping target, both or neither of attachmentId and url, an http or private URL, an unknown attachment', schema: InputErrorSchema },
      429: { description: 'rate_limit_exceeded: the workspace already runs WORKSPACE_RUNNING_IMPORTS imports (Retry-After: 30), or another of its budgets is spent', schema: ErrorSchema },
      503: { description: 'The background workers cannot be reached; nothing was created' },
    },
    handle: async ({ principal, body }) => ({ status: 202, body: importJobView(await imports.create(principal.workspaceId, body)) }),
  });

  routes.get('/imports', 'contacts:read', {
    summary: 'Imports, newest first (without their row errors)',
    query: ImportListQuery,
    responses: { 200: { description: 'Imports', schema: ImportJobListSchema } },
    handle: async ({ principal, query }) => ok({ data: (await imports.list(principal.workspaceId, query.limit)).map(importJobView) }),
  });

  routes.get('/imports/:id', 'contacts:read', {
    summary: 'An import with its phase and progress, and the first 100 failed rows with their line numbers',
    params: ImportParams,
    responses: { 200: { description: 'The import', schema: ImportJobSchema }, 404: NOT_FOUND },
    handle: async ({ principal, params }) => ok(importJobView(await imports.get(principal.workspaceId, params.id))),
  });

  routes.post('/imports/:id/cancel', 'contacts:write', {
    summary: 'Cancel a running import: rows already written stay; no batch is written after it',
    params: ImportParams,
    responses: {
      200: { description: 'The import, canceled (a repeat answers the same)', schema: ImportJobSchema },
      404: NOT_FOUND,
      409: { description: 'The import already completed or failed' },
    },
    handle: async ({ principal, params }) => ok(importJobView(await imports.cancel(principal.workspaceId, params.id))),
  });
}
