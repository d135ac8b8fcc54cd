import { type ApiHarness, startApi } from '../helpers/api-harness';
import { createTestKey, createTestWorkspace } from '../helpers/workspaces';

/** The reads the spec's table gives a `:write` scope, with the `:read` scope each also accepts. */
const LITERAL_WRITE_READS = [
  { path: '/api/v1/tags', literal: 'contacts:write', read: 'contacts:read' },
  { path: '/api/v1/lists', literal: 'contacts:write', read: 'contacts:read' },
  { path: '/api/v1/segments', literal: 'contacts:write', read: 'contacts:read' },
  { path: '/api/v1/custom-fields', literal: 'contacts:write', read: 'contacts:read' },
  { path: '/api/v1/campaigns', literal: 'campaigns:write', read: 'campaigns:read' },
] as const;

describe('scopes as the spec\'s table writes them', () => {
  let api: ApiHarness;
  beforeAll(async () => {
    api = await startApi({ RATE_LIMIT_PER_SECOND: '1000' });
  });
  afterAll(() => api.close());

  it.each(LITERAL_WRITE_READS)('GET $path answers 200 to its literal scope and to its read scope alike', async ({ path, literal, read }) => {
    const { workspaceId } = await createTestWorkspace(api);
    for (const scope of [literal, read]) {
      const { apiKey } = await createTestKey(api, workspaceId, [scope]);
      expect({ scope, status: (await api.call('GET', path, { key: apiKey })).status }).toEqual({ scope, status: 200 });
    }
  });

  it.each(LITERAL_WRITE_READS)('GET $path without either scope answers 403 naming both', async ({ path, literal, read }) => {
    const { workspaceId } = await createTestWorkspace(api);
    const { apiKey } = await createTestKey(api, workspaceId, ['email:send']);
    expect(await api.call('GET', path, { key: apiKey })).toMatchObject({ status: 403, body: { error: 'forbidden', need: `${literal}|${read}` } });
  });

  it('the OpenAPI document lists both scopes on each such read and says why, in the operation and the security scheme', async () => {
    const document = (await api.call('GET', '/api/v1/openapi.json')).body as {
      paths: Record<string, { get: { 'x-scopes': string[]; description: string } }>;
      components: { securitySchemes: { bearerAuth: { description: string } } };
    };
    for (const { path, literal, read } of LITERAL_WRITE_READS) {
      const operation = document.paths[path].get;
      expect({ path, scopes: operation['x-scopes'] }).toEqual({ path, scopes: [literal, read] });
      expect(operation.description).toContain(`The spec's table writes ${literal} for this read; ${read} is accepted too`);
    }
    expect(document.components.securitySchemes.bearerAuth.description).toContain('the `:read` one is accepted too');
  });
});
