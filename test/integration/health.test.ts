import { type ApiHarness, startApi } from '../helpers/api-harness';

describe('health, readiness, metrics and the API reference', () => {
  let api: ApiHarness;
  beforeAll(async () => {
    api = await startApi();
  });
  afterAll(() => api.close());

  it('/healthz answers while the process lives', async () => {
    expect(await api.call('GET', '/healthz')).toMatchObject({ status: 200, body: { status: 'ok' } });
  });

  it('/readyz checks Postgres, Redis and Temporal', async () => {
    const response = await api.call('GET', '/readyz');
    expect(response).toMatchObject({
      status: 200,
      body: { status: 'ready', checks: { postgres: 'ok', redis: 'ok', temporal: 'ok' } },
    });
  });

  it('/readyz answers 503 naming what is unreachable', async () => {
    const broken = await startApi({ REDIS_URL: 'redis://127.0.0.1:1/0', TEMPORAL_ADDRESS: '127.0.0.1:1' });
    try {
      const response = await broken.call('GET', '/readyz');
      expect(response.status).toBe(503);
      expect(response.body).toMatchObject({ status: 'unavailable', checks: { postgres: 'ok' } });
      const checks = (response.body as { checks: Record<string, string> }).checks;
      expect(checks.redis).not.toBe('ok');
      expect(checks.temporal).not.toBe('ok');
    } finally {
      await broken.close();
    }
  });

  it('/metrics exposes request latency by route pattern, never by raw id', async () => {
    await api.call('DELETE', '/api/v1/api-keys/00000000-0000-4000-8000-000000000000');
    const response = await fetch(`${api.url}/metrics`);
    const text = await response.text();
    expect(text).toContain('http_request_duration_seconds_bucket');
    expect(text).not.toContain('00000000-0000-4000-8000-000000000000');
  });

  it('serves the OpenAPI 3.1 document and a browsable reference', async () => {
    const document = await api.call('GET', '/api/v1/openapi.json');
    expect(document.body).toMatchObject({ openapi: '3.1.0', info: { version: '1.0.0' } });
    const page = await fetch(`${api.url}/api/v1/docs/`);
    expect(page.status).toBe(200);
    expect(await page.text()).toContain('swagger-ui');
  });
});
