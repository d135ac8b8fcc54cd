import { ValidationErrorSchema } from '../http/openapi';
import { literalOrRead } from '../../core/scopes';
import { created, ok, type RouteTable } from '../http/route';
import { NamedUpsertedSchema } from '../http/named-upserted-schema';
import {
  CreateListBody,
  ListDeletedSchema,
  ListListSchema,
  ListMembersAddedSchema,
  ListMembersBody,
  ListMembersRemovedSchema,
  ListParams,
} from './schemas';
import type { ListService } from './service';
import { listView } from './views';

export function listRoutes(routes: RouteTable, lists: ListService): void {
  routes.get('/lists', literalOrRead('contacts:write'), {
    summary: 'List static lists with their member counts, newest first',
    responses: { 200: { description: 'Lists', schema: ListListSchema } },
    handle: async ({ principal }) => ok({ data: (await lists.list(principal.workspaceId)).map(listView) }),
  });

  routes.post('/lists', 'contacts:write', {
    summary: 'Create a list; a repeat with the same name in any case answers the existing list',
    body: CreateListBody,
    responses: {
      201: { description: 'Created', schema: NamedUpsertedSchema },
      200: { description: 'Already exists (created false)', schema: NamedUpsertedSchema },
    },
    handle: async ({ principal, body }) => {
      const { list, created: isNew } = await lists.create(principal.workspaceId, body.name);
      const reply = { id: list.id, name: list.name, created: isNew };
      return isNew ? created(reply) : ok(reply);
    },
  });

  routes.delete('/lists/:id', 'contacts:write', {
    summary: 'Delete a list (its contacts stay)',
    params: ListParams,
    responses: { 200: { description: 'Deleted', schema: ListDeletedSchema }, 404: { description: 'No such list' } },
    handle: async ({ principal, params }) => {
      await lists.remove(principal.workspaceId, params.id);
      return ok({ deleted: true, id: params.id });
    },
  });

  routes.post('/lists/:id/contacts', 'contacts:write', {
    summary: 'Add contacts to a list (idempotent)',
    params: ListParams,
    body: ListMembersBody,
    responses: {
      200: { description: 'Added', schema: ListMembersAddedSchema },
      404: { description: 'No such list' },
      422: { description: 'An id that is not a contact of this workspace (contactIds[i]); nothing is added', schema: ValidationErrorSchema },
    },
    handle: async ({ principal, params, body }) => ok({ added: await lists.addMembers(principal.workspaceId, params.id, body.contactIds) }),
  });

  routes.delete('/lists/:id/contacts', 'contacts:write', {
    summary: 'Remove contacts from a list (idempotent)',
    params: ListParams,
    body: ListMembersBody,
    responses: { 200: { description: 'Removed', schema: ListMembersRemovedSchema }, 404: { description: 'No such list' } },
    handle: async ({ principal, params, body }) => ok({ removed: await lists.removeMembers(principal.workspaceId, params.id, body.contactIds) }),
  });
}
