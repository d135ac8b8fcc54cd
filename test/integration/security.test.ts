import { grantsAny, SCOPES, type Scope } from '../../core/scopes';
import { type ApiHarness, startApi } from '../helpers/api-harness';
import { createTestKey, createTestWorkspace } from '../helpers/workspaces';

interface DocumentedRoute {
  method: string;
  path: string;
  scopes: Scope[];
}

/**
 * Walks every route of the generated OpenAPI document, so each route added later is covered without
 * touching this file: no key answers 401, a key without the route's scope answers 403 with `need`.
 */
async function documentedRoutes(api: ApiHarness): Promise<DocumentedRoute[]> {
  const response = await api.call('GET', '/api/v1/openapi.json');
  const document = response.body as { paths: Record<string, Record<string, { 'x-scopes': Scope[] }>> };
  return Object.entries(document.paths).flatMap(([path, operations]) =>
    Object.entries(operations).map(([method, operation]) => ({
      method: method.toUpperCase(),
      path: path.replace(/\{[^}]+\}/g, '00000000-0000-4000-8000-000000000000'),
      scopes: operation['x-scopes'],
    })),
  );
}

describe('every route is guarded', () => {
  let api: ApiHarness;
  let routes: DocumentedRoute[];
  beforeAll(async () => {
    api = await startApi({ RATE_LIMIT_PER_SECOND: '1000' });
    routes = await documentedRoutes(api);
  });
  afterAll(() => api.close());

  it('the document lists the routes of this version', () => {
    expect(routes.map((route) => `${route.method} ${route.path.replace(/0{8}-[-0-9]+/, ':id')}`)).toEqual(
      expect.arrayContaining(['GET /api/v1/api-keys', 'POST /api/v1/api-keys', 'DELETE /api/v1/api-keys/:id', 'GET /api/v1/usage']),
    );
  });

  it('without a key every route answers 401', async () => {
    for (const route of routes) {
      const response = await api.call(route.method, route.path, { body: route.method === 'GET' ? undefined : {} });
      expect({ route, status: response.status }).toEqual({ route, status: 401 });
    }
  });

  it('with a key lacking the scope every scoped route answers 403 with need', async () => {
    const { workspaceId } = await createTestWorkspace(api);
    for (const route of routes.filter((candidate) => candidate.scopes.length > 0)) {
      const unrelated = SCOPES.filter((scope) => !grantsAny([scope], route.scopes) && !route.scopes.includes(scope));
      const { apiKey } = await createTestKey(api, workspaceId, unrelated);
      const response = await api.call(route.method, route.path, { key: apiKey, body: route.method === 'GET' ? undefined : {} });
      expect({ route, status: response.status, body: response.body }).toEqual({
        route,
        status: 403,
        body: { error: 'forbidden', need: route.scopes.join('|') },
      });
    }
  });

  it('with the route\'s scope the request passes the scope check', async () => {
    const { workspaceId } = await createTestWorkspace(api);
    for (const route of routes.filter((candidate) => candidate.scopes.length > 0)) {
      const { apiKey } = await createTestKey(api, workspaceId, [route.scopes[0]]);
      const response = await api.call(route.method, route.path, { key: apiKey, body: route.method === 'GET' ? undefined : {} });
      expect({ route, status: response.status }).not.toEqual({ route, status: 401 });
      // A route may still refuse for its own reasons (a key cannot mint a broader key), but not for the scope.
      expect({ route, body: response.body }).not.toEqual({ route, body: { error: 'forbidden', need: route.scopes.join('|') } });
    }
  });
});
