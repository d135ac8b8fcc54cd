import { type ApiHarness, startApi } from '../helpers/api-harness';
import { createTestWorkspace } from '../helpers/workspaces';

describe('error shapes at the edge', () => {
  let api: ApiHarness;
  beforeAll(async () => {
    api = await startApi({ MAX_BODY_BYTES: '2048' });
  });
  afterAll(() => api.close());

  it('an invalid body answers 422 with flattened form and field errors', async () => {
    const { apiKey } = await createTestWorkspace(api);
    const response = await api.call('POST', '/api/v1/api-keys', { key: apiKey, body: { scopes: ['not:a-scope'], name: '' } });
    expect(response.status).toBe(422);
    expect(response.body).toEqual({
      error: { formErrors: [], fieldErrors: { scopes: [expect.any(String)], name: [expect.any(String)] } },
    });
  });

  it('malformed JSON answers 400 invalid_json', async () => {
    const { apiKey } = await createTestWorkspace(api);
    const response = await api.call('POST', '/api/v1/api-keys', { key: apiKey, raw: '{"scopes": [' });
    expect(response).toMatchObject({ status: 400, body: { error: 'invalid_json' } });
  });

  it('a body over the limit answers 413 payload_too_large', async () => {
    const { apiKey } = await createTestWorkspace(api);
    const response = await api.call('POST', '/api/v1/api-keys', { key: apiKey, body: { name: 'x'.repeat(4096) } });
    expect(response).toMatchObject({ status: 413, body: { error: 'payload_too_large' } });
  });

  it('an unknown route answers 404 not_found, with or without a key', async () => {
    const { apiKey } = await createTestWorkspace(api);
    for (const key of [apiKey, undefined]) {
      const response = await api.call('GET', '/api/v1/no-such-thing', { key });
      expect(response).toMatchObject({ status: 404, body: { error: 'not_found', message: expect.any(String) } });
    }
  });

  it('another workspace\'s key answers 404 exactly like a key that does not exist, and keeps working', async () => {
    const mine = await createTestWorkspace(api);
    const theirs = await createTestWorkspace(api);
    const foreign = await api.call('DELETE', `/api/v1/api-keys/${theirs.keyId}`, { key: mine.apiKey });
    const missing = await api.call('DELETE', '/api/v1/api-keys/00000000-0000-4000-8000-000000000000', { key: mine.apiKey });
    expect(foreign.status).toBe(404);
    expect(foreign.body).toEqual(missing.body);
    expect((await api.call('GET', '/api/v1/usage', { key: theirs.apiKey })).status).toBe(200);
  });

  it('a malformed id answers 404, not 422', async () => {
    const { apiKey } = await createTestWorkspace(api);
    const response = await api.call('DELETE', '/api/v1/api-keys/not-a-uuid', { key: apiKey });
    expect(response).toMatchObject({ status: 404, body: { error: 'not_found' } });
  });

  it('every response carries a request id, and a sane caller-given one is kept', async () => {
    const response = await fetch(`${api.url}/healthz`, { headers: { 'x-request-id': 'trace-123' } });
    expect(response.headers.get('x-request-id')).toBe('trace-123');
    const generated = await fetch(`${api.url}/healthz`, { headers: { 'x-request-id': 'bad id with spaces' } });
    expect(generated.headers.get('x-request-id')).toMatch(/^[0-9a-f-]{36}$/);
  });
});
