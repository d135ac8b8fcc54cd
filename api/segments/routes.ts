import { ValidationErrorSchema } from '../http/openapi';
import { literalOrRead } from '../../core/scopes';
import { created, ok, type RouteTable } from '../http/route';
import {
  CreateSegmentBody,
  PreviewSegmentBody,
  SegmentDeletedSchema,
  SegmentListSchema,
  SegmentParams,
  SegmentPreviewSchema,
  SegmentSchema,
  UpdateSegmentBody,
} from './schemas';
import type { SegmentService } from './service';
import { segmentView } from './views';

const INVALID_RULES = {
  description: 'Invalid rules: each bad node is named by its path, e.g. definition.rules[1].rules[0].operator',
  schema: ValidationErrorSchema,
};

export function segmentRoutes(routes: RouteTable, segments: SegmentService): void {
  routes.get('/segments', literalOrRead('contacts:write'), {
    summary: 'List segments, newest first',
    responses: { 200: { description: 'Segments', schema: SegmentListSchema } },
    handle: async ({ principal }) => ok({ data: (await segments.list(principal.workspaceId)).map(segmentView) }),
  });

  routes.post('/segments', 'contacts:write', {
    summary: 'Create a segment from a rule tree (AudienceRules)',
    body: CreateSegmentBody,
    responses: { 201: { description: 'Created', schema: SegmentSchema }, 422: INVALID_RULES },
    handle: async ({ principal, body }) => created(segmentView(await segments.create(principal.workspaceId, body))),
  });

  routes.post('/segments/preview', 'contacts:read', {
    cost: 'heavy',
    summary: 'Count the contacts a rule tree matches now, with a sample of up to 5',
    body: PreviewSegmentBody,
    responses: { 200: { description: 'The audience now', schema: SegmentPreviewSchema }, 422: INVALID_RULES },
    handle: async ({ principal, body }) => ok(await segments.preview(principal.workspaceId, body.definition)),
  });

  routes.get('/segments/:id', 'contacts:read', {
    summary: 'A segment with its rules',
    params: SegmentParams,
    responses: { 200: { description: 'The segment', schema: SegmentSchema }, 404: { description: 'No such segment' } },
    handle: async ({ principal, params }) => ok(segmentView(await segments.get(principal.workspaceId, params.id))),
  });

  routes.patch('/segments/:id', 'contacts:write', {
    summary: 'Rename a segment or replace its rules',
    params: SegmentParams,
    body: UpdateSegmentBody,
    responses: { 200: { description: 'Updated', schema: SegmentSchema }, 404: { description: 'No such segment' }, 422: INVALID_RULES },
    handle: async ({ principal, params, body }) => ok(segmentView(await segments.update(principal.workspaceId, params.id, body))),
  });

  routes.delete('/segments/:id', 'contacts:write', {
    summary: 'Delete a segment',
    params: SegmentParams,
    responses: { 200: { description: 'Deleted', schema: SegmentDeletedSchema }, 404: { description: 'No such segment' } },
    handle: async ({ principal, params }) => {
      await segments.remove(principal.workspaceId, params.id);
      return ok({ deleted: true, id: params.id });
    },
  });
}
