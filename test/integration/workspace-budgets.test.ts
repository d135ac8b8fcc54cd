import { Semaphore } from 'redis-semaphore';
import { type ApiHarness, startApi } from '../helpers/api-harness';
import { createTestKey, createTestWorkspace } from '../helpers/workspaces';
import { containsRules } from '../helpers/noisy-neighbour';

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
const preview = { definition: containsRules(3) };

describe('the workspace rate limit, by route cost', () => {
  let api: ApiHarness;
  beforeAll(async () => {
    api = await startApi({ WORKSPACE_RATE_LIMIT_PER_SECOND: '40', RATE_COST_HEAVY: '20', RATE_COST_SEARCH: '5', WORKSPACE_HEAVY_CONCURRENCY: '10' });
  });
  afterAll(() => api.close());

  it('three previews from three keys in one second: two answer, the third 429 with Retry-After and limit 2', async () => {
    const { workspaceId, apiKey } = await createTestWorkspace(api);
    const keys = [apiKey, (await createTestKey(api, workspaceId, ['contacts:read'])).apiKey, (await createTestKey(api, workspaceId, ['contacts:read'])).apiKey];
    const answers = await Promise.all(keys.map((key) => api.as(key)('POST', '/segments/preview', preview)));
    expect(answers.map((answer) => answer.status).sort()).toEqual([200, 200, 429]);
    const refused = answers.find((answer) => answer.status === 429);
    expect(refused?.body).toEqual({ error: 'rate_limit_exceeded', limit: 2, retryAfter: 1 });
    expect(refused?.headers.get('retry-after')).toBe('1');
  });

  it("a preview's headers tell the workspace's budget in previews, when it is closer to refusing than the key's", async () => {
    const { apiKey } = await createTestWorkspace(api);
    const answer = await api.as(apiKey)('POST', '/segments/preview', preview);
    expect(answer.status).toBe(200);
    expect(answer.headers.get('ratelimit-limit')).toBe('2');
    expect(answer.headers.get('ratelimit-remaining')).toBe('1');
  });

  it("a read costs one point: the key's limit is what its headers tell", async () => {
    const { apiKey } = await createTestWorkspace(api);
    const answer = await api.as(apiKey)('GET', '/tags');
    expect(answer.headers.get('ratelimit-limit')).toBe('10');
    expect(answer.headers.get('ratelimit-remaining')).toBe('9');
  });

  it('the budget is per workspace: another workspace previews while the first is refused', async () => {
    const first = await createTestWorkspace(api);
    const second = await createTestWorkspace(api);
    const keys = [first.apiKey, (await createTestKey(api, first.workspaceId, ['contacts:read'])).apiKey, (await createTestKey(api, first.workspaceId, ['contacts:read'])).apiKey];
    await Promise.all(keys.map((key) => api.as(key)('POST', '/segments/preview', preview)));
    expect((await api.as(second.apiKey)('POST', '/segments/preview', preview)).status).toBe(200);
  });
});

describe('slots of heavy work per workspace', () => {
  let api: ApiHarness;
  beforeAll(async () => {
    api = await startApi({ WORKSPACE_HEAVY_CONCURRENCY: '1', HEAVY_LEASE_MS: '1000', RATE_LIMIT_PER_SECOND: '1000' });
  });
  afterAll(() => api.close());

  it('a slot is given back when its request finishes: previews one after another all answer', async () => {
    const { apiKey } = await createTestWorkspace(api);
    for (let i = 0; i < 3; i += 1) expect((await api.as(apiKey)('POST', '/segments/preview', preview)).status).toBe(200);
  });

  it("a slot left by a crashed process refuses with 429 and Retry-After until its lease ends, then frees itself", async () => {
    const { workspaceId, apiKey } = await createTestWorkspace(api);
    // What a process that died mid-request leaves in Redis: a lease nobody renews or releases.
    const crashed = new Semaphore(api.redis, `heavy:${workspaceId}`, 1, { lockTimeout: 1_000, refreshInterval: 0 });
    await crashed.acquire();
    const refused = await api.as(apiKey)('POST', '/segments/preview', preview);
    expect(refused.status).toBe(429);
    expect(refused.headers.get('retry-after')).toBe('1');
    expect(refused.body).toEqual({ error: 'rate_limit_exceeded', limit: 1, retryAfter: 1 });
    // Other workspaces' slots are their own.
    const other = await createTestWorkspace(api);
    expect((await api.as(other.apiKey)('POST', '/segments/preview', preview)).status).toBe(200);
    await sleep(1_100);
    expect((await api.as(apiKey)('POST', '/segments/preview', preview)).status).toBe(200);
  });
});

describe('slots of heavy work while Redis is unreachable', () => {
  let api: ApiHarness;
  beforeAll(async () => {
    // Nothing listens on port 1: every Redis command fails at once.
    api = await startApi({ REDIS_URL: 'redis://127.0.0.1:1/0', WORKSPACE_HEAVY_CONCURRENCY: '1' });
  });
  afterAll(() => api.close());

  it('heavy requests are still answered promptly, their slots counted per process and given back', async () => {
    const { apiKey } = await createTestWorkspace(api);
    const started = Date.now();
    for (let i = 0; i < 3; i += 1) expect((await api.as(apiKey)('POST', '/segments/preview', preview)).status).toBe(200);
    expect(Date.now() - started).toBeLessThan(5_000);
  });
});

describe('the cap on API keys per workspace', () => {
  let api: ApiHarness;
  beforeAll(async () => {
    api = await startApi({ MAX_API_KEYS_PER_WORKSPACE: '3', RATE_LIMIT_PER_SECOND: '1000' });
  });
  afterAll(() => api.close());

  it('past the cap POST /api-keys answers 402 quota_exceeded for api_keys; a revoked key frees its place', async () => {
    const { call } = await createTestWorkspace(api);
    const made = [await call('POST', '/api-keys', { name: 'two' }), await call('POST', '/api-keys', { name: 'three' })];
    expect(made.map((answer) => answer.status)).toEqual([201, 201]);
    const refused = await call('POST', '/api-keys', { name: 'four' });
    expect(refused).toMatchObject({
      status: 402,
      body: { error: 'quota_exceeded', message: expect.any(String), resource: 'api_keys', limit: 3, used: 3, remaining: 0, plan: 'free' },
    });
    expect(((await call('GET', '/api-keys')).body as { data: unknown[] }).data).toHaveLength(3);
    expect((await call('DELETE', `/api-keys/${(made[0].body as { id: string }).id}`)).status).toBe(200);
    expect((await call('POST', '/api-keys', { name: 'four' })).status).toBe(201);
  });

  it('creates at once for the last place: exactly one is made', async () => {
    const { call } = await createTestWorkspace(api);
    await call('POST', '/api-keys', { name: 'two' });
    const answers = await Promise.all(Array.from({ length: 5 }, (_, i) => call('POST', '/api-keys', { name: `race-${i}` })));
    expect(answers.map((answer) => answer.status).sort()).toEqual([201, 402, 402, 402, 402]);
    expect(((await call('GET', '/api-keys')).body as { data: unknown[] }).data).toHaveLength(3);
  });
});

describe('imports running per workspace', () => {
  let api: ApiHarness;
  beforeAll(async () => {
    // No worker here: a started import stays queued, so it counts as running until it is canceled.
    api = await startApi({ WORKSPACE_RUNNING_IMPORTS: '1', RATE_LIMIT_PER_SECOND: '1000' });
  });
  afterAll(() => api.close());

  it('past WORKSPACE_RUNNING_IMPORTS a new import answers 429 with Retry-After; a canceled one frees its place, and other workspaces are not counted', async () => {
    const workspace = async () => {
      const { call } = await createTestWorkspace(api, { plan: 'pro' });
      const upload = await call('POST', '/attachments', { filename: 'contacts.csv', content: Buffer.from('email\na@example.com\n').toString('base64') });
      expect(upload.status).toBe(201);
      const body = { provider: 'csv', attachmentId: (upload.body as { attachment: { id: string } }).attachment.id, mapping: { email: 'email' } };
      return { call, body };
    };
    const { call, body } = await workspace();
    const first = await call('POST', '/imports', body);
    expect(first.status).toBe(202);
    const refused = await call('POST', '/imports', body);
    expect(refused).toMatchObject({ status: 429, body: { error: 'rate_limit_exceeded', limit: 1, retryAfter: 30 } });
    expect(refused.headers.get('retry-after')).toBe('30');
    const other = await workspace();
    expect((await other.call('POST', '/imports', other.body)).status).toBe(202);
    expect((await call('POST', `/imports/${(first.body as { id: string }).id}/cancel`)).status).toBe(200);
    expect((await call('POST', '/imports', body)).status).toBe(202);
  });
});

describe('the template renderer queue is bounded', () => {
  let api: ApiHarness;
  beforeAll(async () => {
    api = await startApi({
      TEMPLATE_RENDER_THREADS: '1',
      TEMPLATE_RENDER_MAX_QUEUE: '1',
      TEMPLATE_RENDER_TIMEOUT_MS: '1500',
      WORKSPACE_HEAVY_CONCURRENCY: '10',
      RATE_LIMIT_PER_SECOND: '1000',
      WORKSPACE_RATE_LIMIT_PER_SECOND: '10000',
    });
  });
  afterAll(() => api.close());

  it('renders past the busy thread and its queue answer 429 with Retry-After at once, not after the others', async () => {
    const { call } = await createTestWorkspace(api);
    // About 160 ms of loops a block: longer than the render budget in all, so each render holds the thread 1.5 s.
    const slowBlock = { type: 'heading', text: '{% for a in (1..600) %}{% for b in (1..600) %}{% endfor %}{% endfor %}Slow' };
    const slow = await call('POST', '/templates', { name: 'Slow', format: 'blocks', subject: 'Slow', body: Array.from({ length: 100 }, () => slowBlock) });
    const normal = await call('POST', '/templates', { name: 'Normal', subject: 'Hi', body: '<p>Hi</p>' });
    // The thread starts with the first render.
    expect((await call('POST', `/templates/${(normal.body as { id: string }).id}/render`, { variables: {} })).status).toBe(200);

    const slowId = (slow.body as { id: string }).id;
    const started = performance.now();
    const answers = await Promise.all(
      Array.from({ length: 4 }, async () => {
        const answer = await call('POST', `/templates/${slowId}/render`, { variables: {} });
        return { ...answer, ms: performance.now() - started };
      }),
    );
    const refused = answers.filter((answer) => answer.status === 429);
    expect(answers.map((answer) => answer.status).sort()).toEqual([422, 422, 429, 429]);
    for (const answer of refused) {
      expect(answer.headers.get('retry-after')).toBe('1');
      expect(answer.body).toEqual({ error: 'rate_limit_exceeded', limit: 1, retryAfter: 1 });
      expect(answer.ms).toBeLessThan(1_000);
    }
  });
});
