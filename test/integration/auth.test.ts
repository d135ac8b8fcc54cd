import { publishKeyRevocation } from '../../db/key-revocations';
import { revokeApiKey } from '../../db/repositories/api-keys';
import { type ApiHarness, startApi } from '../helpers/api-harness';
import { createTestKey, createTestWorkspace } from '../helpers/workspaces';

describe('authentication', () => {
  let api: ApiHarness;
  // A long cache TTL proves that revocation does not wait for the cache to expire.
  beforeAll(async () => {
    api = await startApi({ API_KEY_CACHE_TTL_MS: '600000' });
  });
  afterAll(() => api.close());

  it('a request without a key answers 401 unauthorized', async () => {
    const response = await api.call('GET', '/api/v1/usage');
    expect(response.status).toBe(401);
    expect(response.body).toEqual({ error: 'unauthorized', message: expect.any(String) });
  });

  it.each([
    ['a malformed token', 'not-a-key'],
    ['a well-formed key that does not exist', `sk_${'x'.repeat(40)}`],
  ])('%s answers 401', async (_case, key) => {
    const response = await api.call('GET', '/api/v1/usage', { key });
    expect(response.status).toBe(401);
    expect(response.body).toMatchObject({ error: 'unauthorized' });
  });

  it('a key revoked over the API stops working at once', async () => {
    const { workspaceId, apiKey } = await createTestWorkspace(api);
    const victim = await createTestKey(api, workspaceId, ['contacts:read']);
    expect((await api.call('GET', '/api/v1/usage', { key: victim.apiKey })).status).toBe(200);

    const revoked = await api.call('DELETE', `/api/v1/api-keys/${victim.keyId}`, { key: apiKey });
    expect(revoked).toMatchObject({ status: 200, body: { deleted: true, id: victim.keyId } });
    expect((await api.call('GET', '/api/v1/usage', { key: victim.apiKey })).status).toBe(401);
  });

  it('a key revoked by another process (the admin CLI) is evicted through Redis', async () => {
    const { workspaceId, apiKey, keyId } = await createTestWorkspace(api);
    expect((await api.call('GET', '/api/v1/usage', { key: apiKey })).status).toBe(200);

    const hash = await revokeApiKey(api.db, workspaceId, keyId);
    await publishKeyRevocation(api.redis, hash as string);
    let status = 200;
    for (let attempt = 0; attempt < 50 && status === 200; attempt += 1) {
      status = (await api.call('GET', '/api/v1/usage', { key: apiKey })).status;
      if (status === 200) await new Promise((resolve) => setTimeout(resolve, 20));
    }
    expect(status).toBe(401);
  });
});
