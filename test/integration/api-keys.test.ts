import { type ApiHarness, startApi } from '../helpers/api-harness';
import { createTestKey, createTestWorkspace } from '../helpers/workspaces';

describe('API keys over HTTP', () => {
  let api: ApiHarness;
  beforeAll(async () => {
    api = await startApi();
  });
  afterAll(() => api.close());

  it('creating a key shows the secret once; the list shows only its prefix', async () => {
    const { apiKey } = await createTestWorkspace(api);
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
    const { apiKey } = await createTestWorkspace(api);
    const created = await api.call('POST', '/api/v1/api-keys', { key: apiKey, body: { scopes: ['keys:write'] } });
    const narrow = (created.body as { apiKey: string }).apiKey;
    expect((await api.call('GET', '/api/v1/api-keys', { key: narrow })).status).toBe(200);
  });

  it('a key cannot create a key with scopes it does not hold', async () => {
    const { workspaceId } = await createTestWorkspace(api);
    const { apiKey } = await createTestKey(api, workspaceId, ['keys:write', 'contacts:read']);
    const escalate = await api.call('POST', '/api/v1/api-keys', { key: apiKey, body: { scopes: ['contacts:write'] } });
    expect(escalate).toMatchObject({ status: 403, body: { error: 'forbidden', need: 'contacts:write' } });
    const full = await api.call('POST', '/api/v1/api-keys', { key: apiKey, body: {} });
    expect(full).toMatchObject({ status: 403, body: { error: 'forbidden', need: '*' } });
  });

  it('a key lists only its own workspace\'s keys', async () => {
    const mine = await createTestWorkspace(api);
    const theirs = await createTestWorkspace(api);
    const list = await api.call('GET', '/api/v1/api-keys', { key: mine.apiKey });
    const ids = (list.body as { data: Array<{ id: string }> }).data.map((key) => key.id);
    expect(ids).toEqual([mine.keyId]);
    expect(ids).not.toContain(theirs.keyId);
  });

  it('a keys:write key lists only the keys whose scopes it holds; a full-access key lists them all', async () => {
    const owner = await createTestWorkspace(api);
    const manager = await createTestKey(api, owner.workspaceId, ['keys:write', 'email:send', 'contacts:write']);
    const sender = await createTestKey(api, owner.workspaceId, ['email:send']);
    const reader = await createTestKey(api, owner.workspaceId, ['contacts:read']);
    const templates = await createTestKey(api, owner.workspaceId, ['templates:write']);
    const listed = async (key: string) =>
      ((await api.call('GET', '/api/v1/api-keys', { key })).body as { data: Array<{ id: string }> }).data.map((item) => item.id).sort();

    // contacts:write grants contacts:read, so the reader is within the manager's reach; the owner's `*` and templates are not.
    expect(await listed(manager.apiKey)).toEqual([manager.keyId, sender.keyId, reader.keyId].sort());
    expect(await listed(owner.apiKey)).toEqual([owner.keyId, manager.keyId, sender.keyId, reader.keyId, templates.keyId].sort());
  });

  it('a keys:write key cannot revoke a broader key: 404 like an unknown one, and that key keeps working', async () => {
    const owner = await createTestWorkspace(api);
    const manager = await createTestKey(api, owner.workspaceId, ['keys:write', 'email:send']);
    const wider = await createTestKey(api, owner.workspaceId, ['email:send', 'contacts:write']);
    const sender = await createTestKey(api, owner.workspaceId, ['email:send']);
    const revoke = (id: string) => api.call('DELETE', `/api/v1/api-keys/${id}`, { key: manager.apiKey });

    const unknown = await revoke('00000000-0000-4000-8000-000000000000');
    for (const broader of [owner.keyId, wider.keyId]) {
      const refused = await revoke(broader);
      expect(refused.status).toBe(404);
      expect(refused.body).toEqual(unknown.body);
    }
    expect((await api.call('GET', '/api/v1/usage', { key: owner.apiKey })).status).toBe(200);
    expect((await api.call('GET', '/api/v1/contacts', { key: wider.apiKey })).status).toBe(200);

    expect((await revoke(sender.keyId)).status).toBe(200);
    expect((await api.call('GET', '/api/v1/usage', { key: sender.apiKey })).status).toBe(401);
    expect((await api.call('DELETE', `/api/v1/api-keys/${wider.keyId}`, { key: owner.apiKey })).status).toBe(200);
  });

  it('a key asked to revoke itself → 409 conflict naming the other ways, and the key keeps working', async () => {
    const { apiKey, keyId } = await createTestWorkspace(api);
    const refused = await api.call('DELETE', `/api/v1/api-keys/${keyId}`, { key: apiKey });
    expect(refused).toMatchObject({ status: 409, body: { error: 'conflict', message: expect.stringContaining('key:revoke') } });
    expect((await api.call('GET', '/api/v1/api-keys', { key: apiKey })).status).toBe(200);
  });

  it('revoking twice answers 404 the second time, and the key leaves the list', async () => {
    const { workspaceId, apiKey } = await createTestWorkspace(api);
    const other = await createTestKey(api, workspaceId, ['email:send']);
    expect((await api.call('DELETE', `/api/v1/api-keys/${other.keyId}`, { key: apiKey })).status).toBe(200);
    expect((await api.call('DELETE', `/api/v1/api-keys/${other.keyId}`, { key: apiKey })).status).toBe(404);
    const list = await api.call('GET', '/api/v1/api-keys', { key: apiKey });
    expect((list.body as { data: Array<{ id: string }> }).data.map((key) => key.id)).not.toContain(other.keyId);
  });

  it('GET /api-keys/current answers any valid key with its own id, name and scopes; a revoked key gets 401', async () => {
    const owner = await createTestWorkspace(api);
    const sender = await createTestKey(api, owner.workspaceId, ['email:send', 'contacts:read']);
    const current = await api.call('GET', '/api/v1/api-keys/current', { key: sender.apiKey });
    expect(current.status).toBe(200);
    expect(current.body).toEqual({ id: sender.keyId, name: 'test', prefix: expect.any(String), scopes: ['email:send', 'contacts:read'], createdAt: expect.any(String) });
    expect(sender.apiKey.startsWith((current.body as { prefix: string }).prefix)).toBe(true);
    expect(await api.call('GET', '/api/v1/api-keys/current', { key: owner.apiKey })).toMatchObject({ status: 200, body: { id: owner.keyId, scopes: ['*'] } });

    expect((await api.call('DELETE', `/api/v1/api-keys/${sender.keyId}`, { key: owner.apiKey })).status).toBe(200);
    expect((await api.call('GET', '/api/v1/api-keys/current', { key: sender.apiKey })).status).toBe(401);
  });
});
