import { type ApiHarness, startApi } from '../helpers/api-harness';
import { createTestKey, createTestWorkspace } from '../helpers/workspaces';

describe('rate limit: 10 requests per second per key', () => {
  let api: ApiHarness;
  beforeAll(async () => {
    api = await startApi({ UNKNOWN_KEYS_PER_IP_PER_MINUTE: '100000' });
  });
  afterAll(() => api.close());

  it('every response carries RateLimit-Limit, -Remaining and -Reset', async () => {
    const { apiKey } = await createTestWorkspace(api);
    const response = await api.call('GET', '/api/v1/usage', { key: apiKey });
    expect(response.status).toBe(200);
    expect(response.headers.get('ratelimit-limit')).toBe('10');
    expect(response.headers.get('ratelimit-remaining')).toBe('9');
    expect(Number(response.headers.get('ratelimit-reset'))).toBeGreaterThanOrEqual(1);
  });

  it('a 404 of an unknown path and a 405 of a method carry the key\'s headers and count against it', async () => {
    const { apiKey } = await createTestWorkspace(api);
    const unknown = await api.call('GET', '/api/v1/no-such-thing', { key: apiKey });
    const method = await api.call('PUT', '/api/v1/tags', { key: apiKey, body: {} });
    expect([unknown.status, method.status]).toEqual([404, 405]);
    expect([unknown, method].map((response) => response.headers.get('ratelimit-limit'))).toEqual(['10', '10']);
    expect([unknown, method].map((response) => response.headers.get('ratelimit-remaining'))).toEqual(['9', '8']);
    expect(Number(method.headers.get('ratelimit-reset'))).toBeGreaterThanOrEqual(1);
  });

  it('a 401 (no key, a malformed one, an unknown one) and a keyless 404 or 405 carry the per-address headers of unknown keys', async () => {
    const responses = [
      await api.call('GET', '/api/v1/usage', {}),
      await api.call('GET', '/api/v1/usage', { key: 'not-a-key' }),
      await api.call('GET', '/api/v1/usage', { key: `sk_${'x'.repeat(40)}` }),
      await api.call('GET', '/api/v1/no-such-thing', {}),
      await api.call('PUT', '/api/v1/tags', {}),
    ];
    expect(responses.map((response) => response.status)).toEqual([401, 401, 401, 404, 405]);
    for (const response of responses) {
      expect(response.headers.get('ratelimit-limit')).toBe('100000');
      expect(Number(response.headers.get('ratelimit-remaining'))).toBeLessThanOrEqual(100_000);
      expect(Number(response.headers.get('ratelimit-reset'))).toBeGreaterThanOrEqual(1);
    }
  });

  it('the eleventh request within a second answers 429 with Retry-After and the spec body', async () => {
    const { apiKey } = await createTestWorkspace(api);
    const responses = await Promise.all(Array.from({ length: 11 }, () => api.call('GET', '/api/v1/usage', { key: apiKey })));
    const statuses = responses.map((response) => response.status).sort();
    expect(statuses.filter((status) => status === 200)).toHaveLength(10);
    const limited = responses.find((response) => response.status === 429);
    expect(limited?.body).toEqual({ error: 'rate_limit_exceeded', limit: 10, retryAfter: 1 });
    expect(limited?.headers.get('retry-after')).toBe('1');
    expect(limited?.headers.get('ratelimit-remaining')).toBe('0');
  });

  it('the limit is per key: another key of the same workspace is not limited', async () => {
    const first = await createTestWorkspace(api);
    await Promise.all(Array.from({ length: 11 }, () => api.call('GET', '/api/v1/usage', { key: first.apiKey })));
    const second = await createTestKey(api, first.workspaceId, ['keys:write']);
    expect((await api.call('GET', '/api/v1/usage', { key: second.apiKey })).status).toBe(200);
  });

  it('the window resets: after a second the key may call again', async () => {
    const { apiKey } = await createTestWorkspace(api);
    await Promise.all(Array.from({ length: 11 }, () => api.call('GET', '/api/v1/usage', { key: apiKey })));
    await new Promise((resolve) => setTimeout(resolve, 1_100));
    expect((await api.call('GET', '/api/v1/usage', { key: apiKey })).status).toBe(200);
  });
});

describe('rate limit while Redis is unreachable', () => {
  let api: ApiHarness;
  beforeAll(async () => {
    // Nothing listens on port 1: every Redis command fails at once.
    api = await startApi({ REDIS_URL: 'redis://127.0.0.1:1/0' });
  });
  afterAll(() => api.close());

  it('requests are answered promptly and still limited per process', async () => {
    const { apiKey } = await createTestWorkspace(api);
    const started = Date.now();
    const responses = await Promise.all(Array.from({ length: 11 }, () => api.call('GET', '/api/v1/usage', { key: apiKey })));
    expect(Date.now() - started).toBeLessThan(5_000);
    expect(responses.filter((response) => response.status === 200)).toHaveLength(10);
    expect(responses.filter((response) => response.status === 429)).toHaveLength(1);
  });
});
