import { ErrorSchema } from '../http/openapi';
import { created, ok, type RouteTable } from '../http/route';
import {
  ApiKeyCreatedSchema,
  ApiKeyDeletedSchema,
  ApiKeyListSchema,
  ApiKeyParams,
  ApiKeyQuotaExceededSchema,
  ApiKeySchema,
  CreateApiKeyBody,
} from './schemas';
import type { ApiKeyService } from './service';
import { apiKeyCreatedView, apiKeyView } from './views';

export function apiKeyRoutes(routes: RouteTable, keys: ApiKeyService): void {
  // Any valid key may read itself, so a client (the MCP server) can offer only what its key's scopes allow.
  routes.get('/api-keys/current', 'any-key', {
    summary: 'The key making the call: its id, name, prefix and scopes (any valid key, no scope needed)',
    responses: { 200: { description: 'This key', schema: ApiKeySchema } },
    handle: async ({ principal }) => ok(apiKeyView(await keys.current(principal))),
  });

  routes.get('/api-keys', 'keys:write', {
    summary: 'List the workspace\'s active API keys that this key could have created (all of them for a full-access key)',
    responses: { 200: { description: 'Active keys, newest first', schema: ApiKeyListSchema } },
    handle: async ({ principal }) => ok({ data: (await keys.list(principal.workspaceId, principal.scopes)).map(apiKeyView) }),
  });

  routes.post('/api-keys', 'keys:write', {
    summary: 'Create an API key (the key is shown once)',
    body: CreateApiKeyBody,
    responses: {
      201: { description: 'Created', schema: ApiKeyCreatedSchema },
      402: { description: 'quota_exceeded (resource `api_keys`): the workspace already holds MAX_API_KEYS_PER_WORKSPACE active keys', schema: ApiKeyQuotaExceededSchema },
    },
    handle: async ({ principal, body }) => {
      const issued = await keys.create(principal, body);
      return created(apiKeyCreatedView(issued.record, issued.secret));
    },
  });

  routes.delete('/api-keys/:id', 'keys:write', {
    summary: 'Revoke an API key; it stops working at once. A key cannot revoke itself (409): use another key or the admin CLI',
    params: ApiKeyParams,
    responses: {
      200: { description: 'Revoked', schema: ApiKeyDeletedSchema },
      404: { description: 'No such key in this workspace, or one with scopes this key does not hold' },
      409: { description: 'conflict: the key named is the key making the call; revoke it with another key or `npm run admin -- key:revoke`', schema: ErrorSchema },
    },
    handle: async ({ principal, params }) => {
      await keys.revoke(principal, params.id);
      return ok({ deleted: true, id: params.id });
    },
  });
}
