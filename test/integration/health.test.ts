import { randomBytes } from 'node:crypto';
import { type ApiHarness, startApi } from '../helpers/api-harness';

const OPS_TOKEN = randomBytes(24).toString('hex');
const asOperator = { authorization: `Bearer ${OPS_TOKEN}` };

describe('health, readiness, metrics and the API reference', () => {
  let api: ApiHarness;
  beforeAll(async () => {
    api = await startApi({ OPS_TOKEN });
  });
  afterAll(() => api.close());

  async function get(path: string, headers: Record<string, string> = {}, on: ApiHarness = api) {
    const response = await fetch(`${on.url}${path}`, { headers });
    const text = await response.text();
    return { status: response.status, text, body: (response.headers.get('content-type')?.includes('json') ? JSON.parse(text) : text) as unknown };
  }

  it('/healthz answers while the process lives', async () => {
    expect(await api.call('GET', '/healthz')).toMatchObject({ status: 200, body: { status: 'ok' } });
  });

  it('/readyz answers the operator which of Postgres, Redis and Temporal it checked', async () => {
    expect(await get('/readyz', asOperator)).toMatchObject({
      status: 200,
      body: { status: 'ready', checks: { postgres: 'ok', redis: 'ok', temporal: 'ok' } },
    });
  });

  it('/readyz answers anyone else its status only, with or without a wrong token', async () => {
    for (const headers of [{} as Record<string, string>, { authorization: 'Bearer not-the-ops-token-at-all' }, { authorization: `Bearer ${OPS_TOKEN}x` }]) {
      expect(await get('/readyz', headers)).toEqual(expect.objectContaining({ status: 200, body: { status: 'ready' } }));
    }
  });

  it('/readyz answers 503; only the operator learns what is unreachable and how', async () => {
    const broken = await startApi({ OPS_TOKEN, REDIS_URL: 'redis://127.0.0.1:1/0', TEMPORAL_ADDRESS: '127.0.0.1:1' });
    try {
      const operator = await get('/readyz', asOperator, broken);
      expect(operator.status).toBe(503);
      expect(operator.body).toMatchObject({ status: 'unavailable', checks: { postgres: 'ok' } });
      const checks = (operator.body as { checks: Record<string, string> }).checks;
      expect(checks.redis).not.toBe('ok');
      expect(checks.temporal).not.toBe('ok');

      const anyone = await get('/readyz', {}, broken);
      expect(anyone).toEqual(expect.objectContaining({ status: 503, body: { status: 'unavailable' } }));
      expect(anyone.text).not.toContain('127.0.0.1');
    } finally {
      await broken.close();
    }
  });

  it('/metrics exposes request latency by route pattern, never by raw id, to the operator', async () => {
    await api.call('DELETE', '/api/v1/api-keys/00000000-0000-4000-8000-000000000000');
    const response = await get('/metrics', asOperator);
    expect(response.status).toBe(200);
    expect(response.text).toContain('http_request_duration_seconds_bucket');
    expect(response.text).not.toContain('00000000-0000-4000-8000-000000000000');
  });

  it('/metrics without the operator token answers 401 and shows nothing', async () => {
    for (const headers of [{} as Record<string, string>, { authorization: 'Bearer wrong-token-of-some-length' }, { authorization: `Bearer ${OPS_TOKEN.slice(0, -1)}` }]) {
      const response = await get('/metrics', headers);
      expect(response).toMatchObject({ status: 401, body: { error: 'unauthorized' } });
      expect(response.text).not.toContain('http_request_duration_seconds');
    }
  });

  it('without OPS_TOKEN, /metrics is open in development and test and not served in production', async () => {
    const test = await startApi({ OPS_TOKEN: '' });
    const production = await startApi({ OPS_TOKEN: '', NODE_ENV: 'production', MASTER_KEY: randomBytes(32).toString('base64') });
    try {
      expect((await get('/metrics', {}, test)).text).toContain('http_request_duration_seconds');
      expect(await get('/metrics', {}, production)).toMatchObject({ status: 404, body: { error: 'not_found' } });
      expect(await get('/readyz', {}, production)).toEqual(expect.objectContaining({ status: 200, body: { status: 'ready' } }));
    } finally {
      await Promise.all([test.close(), production.close()]);
    }
  });

  it('serves the OpenAPI 3.1 document and a browsable reference', async () => {
    const document = await api.call('GET', '/api/v1/openapi.json');
    expect(document.body).toMatchObject({ openapi: '3.1.0', info: { version: '1.0.0' } });
    const page = await fetch(`${api.url}/api/v1/docs/`);
    expect(page.status).toBe(200);
    expect(await page.text()).toContain('swagger-ui');
  });
});
