import { type ApiHarness, startApi } from '../helpers/api-harness';
import { createKey, createWorkspace } from '../helpers/factories';

describe('API keys over HTTP', () => {
  let api: ApiHarness;
  beforeAll(async () => {
    api = await startApi();
  });
  afterAll(() => api.close());

  it('creating a key shows the secret once; the list shows only its prefix', async () => {
    const { apiKey } = await createWorkspace(api.db);
    const created = await api.call('POST', '/api/v1/api-keys', { key: apiKey, body: { name: 'ci', scopes: ['email:send'] } });
    expect(created.status).toBe(201);
    const body = created.body as { id: string; apiKey: string; prefix: string; scopes: string[] };
    expect(body).toMatchObject({ name: 'ci', scopes: ['email:send'], apiKey: expect.stringMatching(/^sk_/) });
    expect(body.apiKey.startsWith(body.prefix)).toBe(true);

    const list = await api.call('GET', '/api/v1/api-keys', { key: apiKey });
    const listed = (list.body as { data: Array<Record<string, unknown>> }).data;
    expect(listed.find((key) => key.id === body.id)).toEqual({
      id: body.id,
      name: 'ci',
      prefix: body.prefix,
      scopes: ['email:send'],
      createdAt: expect.any(String),
    });
    expect(JSON.stringify(list.body)).not.toContain(body.apiKey);
  });

  it('the new key works with exactly its scopes', async () => {
    const { apiKey } = await createWorkspace(api.db);
    const created = await api.call('POST', '/api/v1/api-keys', { key: apiKey, body: { scopes: ['keys:write'] } });
    const narrow = (created.body as { apiKey: string }).apiKey;
    expect((await api.call('GET', '/api/v1/api-keys', { key: narrow })).status).toBe(200);
  });

  it('a key cannot create a key with scopes it does not hold', async () => {
    const { workspaceId } = await createWorkspace(api.db);
    const { apiKey } = await createKey(api.db, workspaceId, ['keys:write', 'contacts:read']);
    const escalate = await api.call('POST', '/api/v1/api-keys', { key: apiKey, body: { scopes: ['contacts:write'] } });
    expect(escalate).toMatchObject({ status: 403, body: { error: 'forbidden', need: 'contacts:write' } });
    const full = await api.call('POST', '/api/v1/api-keys', { key: apiKey, body: {} });
    expect(full).toMatchObject({ status: 403, body: { error: 'forbidden', need: '*' } });
  });

  it('a key lists only its own workspace\'s keys', async () => {
    const mine = await createWorkspace(api.db);
    const theirs = await createWorkspace(api.db);
    const list = await api.call('GET', '/api/v1/api-keys', { key: mine.apiKey });
    const ids = (list.body as { data: Array<{ id: string }> }).data.map((key) => key.id);
    expect(ids).toEqual([mine.keyId]);
    expect(ids).not.toContain(theirs.keyId);
  });

  it('revoking twice answers 404 the second time, and the key leaves the list', async () => {
    const { workspaceId, apiKey } = await createWorkspace(api.db);
    const other = await createKey(api.db, workspaceId, ['email:send']);
    expect((await api.call('DELETE', `/api/v1/api-keys/${other.keyId}`, { key: apiKey })).status).toBe(200);
    expect((await api.call('DELETE', `/api/v1/api-keys/${other.keyId}`, { key: apiKey })).status).toBe(404);
    const list = await api.call('GET', '/api/v1/api-keys', { key: apiKey });
    expect((list.body as { data: Array<{ id: string }> }).data.map((key) => key.id)).not.toContain(other.keyId);
  });
});
