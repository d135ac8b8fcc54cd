import { created, ok, type RouteTable } from '../http/route';
import { literalOrRead } from '../../core/scopes';
import { NamedUpsertedSchema } from '../http/named-upserted-schema';
import { CreateTagBody, TagDeletedSchema, TagListSchema, TagParams } from './schemas';
import type { TagService } from './service';
import { tagView } from './views';

export function tagRoutes(routes: RouteTable, tags: TagService): void {
  routes.get('/tags', literalOrRead('contacts:write'), {
    summary: 'List tags with how many contacts have each, newest first',
    responses: { 200: { description: 'Tags', schema: TagListSchema } },
    handle: async ({ principal }) => ok({ data: (await tags.list(principal.workspaceId)).map(tagView) }),
  });

  routes.post('/tags', 'contacts:write', {
    summary: 'Create a tag; a repeat with the same name in any case answers the existing tag',
    body: CreateTagBody,
    responses: {
      201: { description: 'Created', schema: NamedUpsertedSchema },
      200: { description: 'Already exists (created false)', schema: NamedUpsertedSchema },
    },
    handle: async ({ principal, body }) => {
      const { tag, created: isNew } = await tags.create(principal.workspaceId, body);
      const reply = { id: tag.id, name: tag.name, created: isNew };
      return isNew ? created(reply) : ok(reply);
    },
  });

  routes.delete('/tags/:id', 'contacts:write', {
    summary: 'Delete a tag; it is removed from every contact',
    params: TagParams,
    responses: { 200: { description: 'Deleted', schema: TagDeletedSchema }, 404: { description: 'No such tag' } },
    handle: async ({ principal, params }) => {
      await tags.remove(principal.workspaceId, params.id);
      return ok({ deleted: true, id: params.id });
    },
  });
}
