import { created, ok, type RouteTable } from '../http/route';
import { literalOrRead } from '../../core/scopes';
import { CreateCustomFieldBody, CustomFieldListSchema, CustomFieldParams, CustomFieldSchema, UpdateCustomFieldBody } from './schemas';
import type { CustomFieldService } from './service';
import { customFieldView } from './views';

export function customFieldRoutes(routes: RouteTable, fields: CustomFieldService): void {
  routes.get('/custom-fields', literalOrRead('contacts:write'), {
    summary: 'List custom fields: system fields, then the workspace\'s own, newest first',
    responses: { 200: { description: 'Fields, archived ones included', schema: CustomFieldListSchema } },
    handle: async ({ principal }) => ok({ data: (await fields.list(principal.workspaceId)).map(customFieldView) }),
  });

  routes.post('/custom-fields', 'contacts:write', {
    summary: 'Define a typed custom field; contact attributes under its key must then hold its type',
    body: CreateCustomFieldBody,
    responses: {
      201: { description: 'Created', schema: CustomFieldSchema },
      409: { description: 'conflict: the key is taken (id of the existing field), or is a system field' },
    },
    handle: async ({ principal, body }) => created(customFieldView(await fields.create(principal.workspaceId, body))),
  });

  routes.patch('/custom-fields/:id', 'contacts:write', {
    summary: 'Change a field\'s label, options or group, or archive it (archived: true)',
    params: CustomFieldParams,
    body: UpdateCustomFieldBody,
    responses: {
      200: { description: 'Updated', schema: CustomFieldSchema },
      404: { description: 'No such field' },
      409: { description: 'System fields cannot be changed' },
    },
    handle: async ({ principal, params, body }) => ok(customFieldView(await fields.update(principal.workspaceId, params.id, body))),
  });
}
