import { createMessagingClient, DEFAULT_RETRY_OPTIONS, retryDelayMs, unwrap } from '../../packages/client/src';

const delays = { maxDelayMs: DEFAULT_RETRY_OPTIONS.maxDelayMs, baseDelayMs: DEFAULT_RETRY_OPTIONS.baseDelayMs };

describe('the retry schedule', () => {
  const now = Date.parse('2026-01-01T00:00:00Z');

  it('waits what Retry-After says, in seconds or until its date', () => {
    expect(retryDelayMs(1, '2', delays, () => 0.5, now)).toBe(2000);
    expect(retryDelayMs(3, '0', delays, () => 0.5, now)).toBe(0);
    expect(retryDelayMs(1, 'Thu, 01 Jan 2026 00:00:04 GMT', delays, () => 0.5, now)).toBe(4000);
  });

  it('does not wait for a Retry-After beyond maxDelayMs (null: give the answer back)', () => {
    expect(retryDelayMs(1, '30', delays, () => 0.5, now)).toBeNull();
    expect(retryDelayMs(1, '30', { ...delays, maxDelayMs: 30_000 }, () => 0.5, now)).toBe(30_000);
  });

  it('without Retry-After, backs off exponentially from baseDelayMs with half the step random, capped at maxDelayMs', () => {
    const schedule = (random: number) => [1, 2, 3, 4, 5, 6, 7].map((attempt) => retryDelayMs(attempt, null, delays, () => random, now));
    expect(schedule(0)).toEqual([250, 500, 1000, 2000, 4000, 5000, 5000]);
    expect(schedule(0.999999)).toEqual([500, 1000, 2000, 4000, 8000, 10_000, 10_000]);
    expect(retryDelayMs(1, 'not a date', delays, () => 0, now)).toBe(250);
  });
});

/** A stand-in service: answers in turn, recording every request it got (method, path, body). */
function service(...answers: Array<Response | Error>) {
  const got: Array<{ method: string; path: string; body: string; authorization: string | null }> = [];
  const fetch = async (request: Request): Promise<Response> => {
    got.push({ method: request.method, path: new URL(request.url).pathname, body: await request.text(), authorization: request.headers.get('authorization') });
    const answer = answers.shift() ?? new Response('{}', { status: 200 });
    if (answer instanceof Error) throw answer;
    return answer;
  };
  return { fetch, got };
}

const json = (status: number, body: unknown, headers: Record<string, string> = {}) => new Response(JSON.stringify(body), { status, headers: { 'content-type': 'application/json', ...headers } });
const lost = () => new TypeError('fetch failed', { cause: new Error('socket hang up') });
const send = { to: 'ann@example.org', from: 'hi@mail.example.com', subject: 'Hi', html: '<p>Hi</p>' };

describe('the client retries', () => {
  it('a 429 is retried after its Retry-After and the retry succeeds', async () => {
    const { fetch, got } = service(json(429, { error: 'rate_limit_exceeded', limit: 10, retryAfter: 1 }, { 'retry-after': '1' }), json(200, { data: [], total: 0, limit: 50, offset: 0 }));
    const retries: number[] = [];
    const client = createMessagingClient({ baseUrl: 'http://api.test/', apiKey: 'sk_test', fetch, retry: { onRetry: (retry) => retries.push(retry.delayMs) } });
    const started = Date.now();
    const list = await unwrap(client.GET('/api/v1/emails'));
    expect(list.total).toBe(0);
    expect(Date.now() - started).toBeGreaterThanOrEqual(950);
    expect(retries).toEqual([1000]);
    expect(got).toHaveLength(2);
    expect(got[1]).toMatchObject({ method: 'GET', path: '/api/v1/emails', authorization: 'Bearer sk_test' });
  });

  it('a 503 past maxAttempts comes back as the typed error', async () => {
    const unavailable = () => json(503, { error: 'service_unavailable', message: 'try again' }, { 'retry-after': '0' });
    const { fetch, got } = service(unavailable(), unavailable(), unavailable());
    const client = createMessagingClient({ baseUrl: 'http://api.test', apiKey: 'sk_test', fetch, retry: { maxAttempts: 2 } });
    await expect(unwrap(client.GET('/api/v1/usage'))).rejects.toMatchObject({ status: 503, code: 'service_unavailable', retryAfterSeconds: 0 });
    expect(got).toHaveLength(2);
  });

  it('a lost response to a send is retried with the same generated idempotencyKey', async () => {
    const { fetch, got } = service(lost(), json(202, { id: 'm1', status: 'queued', idempotencyKey: 'x' }));
    const client = createMessagingClient({ baseUrl: 'http://api.test', apiKey: 'sk_test', fetch, retry: { baseDelayMs: 1 } });
    await unwrap(client.POST('/api/v1/emails', { body: send }));
    expect(got).toHaveLength(2);
    const [first, second] = got.map((request) => JSON.parse(request.body) as { idempotencyKey: string });
    expect(first!.idempotencyKey).toMatch(/^[0-9a-f-]{36}$/);
    expect(second!.idempotencyKey).toBe(first!.idempotencyKey);
  });

  it("a caller's own key is kept, and each batch item without one gets its own", async () => {
    const { fetch, got } = service(json(202, {}), json(207, { accepted: 2, failed: 0, results: [] }));
    const client = createMessagingClient({ baseUrl: 'http://api.test', apiKey: 'sk_test', fetch });
    await client.POST('/api/v1/emails', { body: { ...send, idempotencyKey: 'order-1234-receipt' } });
    await client.POST('/api/v1/emails/batch', { body: { emails: [send, { ...send, idempotencyKey: 'mine-0001' }, send] } });
    expect(JSON.parse(got[0]!.body)).toEqual({ ...send, idempotencyKey: 'order-1234-receipt' });
    const items = (JSON.parse(got[1]!.body) as { emails: Array<{ idempotencyKey: string }> }).emails.map((item) => item.idempotencyKey);
    expect(items[1]).toBe('mine-0001');
    expect(new Set(items).size).toBe(3);
  });

  it('a lost response to a POST without a key is never retried: it throws network_error at once', async () => {
    const { fetch, got } = service(lost(), json(201, {}));
    const client = createMessagingClient({ baseUrl: 'http://api.test', apiKey: 'sk_test', fetch, idempotencyKeys: false, retry: { baseDelayMs: 1 } });
    await expect(client.POST('/api/v1/campaigns', { body: { name: 'Launch', listId: '6f1c1f38-8a1e-4d55-9b35-37b1f7b2c0aa', fromAddress: 'hi@mail.example.com', subject: 's', html: 'h' } })).rejects.toMatchObject({
      name: 'MessagingApiError', status: 0, code: 'network_error',
    });
    expect(got).toHaveLength(1);
  });

  it('with idempotencyKeys off, a send goes as given; a lost GET is retried', async () => {
    const { fetch, got } = service(json(422, { error: { formErrors: [], fieldErrors: { idempotencyKey: ['Required'] } } }), lost(), json(200, { plan: 'free' }));
    const client = createMessagingClient({ baseUrl: 'http://api.test', apiKey: 'sk_test', fetch, idempotencyKeys: false, retry: { baseDelayMs: 1 } });
    await expect(unwrap(client.POST('/api/v1/emails', { body: send }))).rejects.toMatchObject({ status: 422, code: 'validation_error', fieldErrors: { idempotencyKey: ['Required'] } });
    expect(JSON.parse(got[0]!.body)).toEqual(send);
    await expect(unwrap(client.GET('/api/v1/usage'))).resolves.toEqual({ plan: 'free' });
    expect(got).toHaveLength(3);
  });

  it('retry: false sends every request once', async () => {
    const { fetch, got } = service(json(429, { error: 'rate_limit_exceeded' }, { 'retry-after': '0' }));
    const client = createMessagingClient({ baseUrl: 'http://api.test', apiKey: 'sk_test', fetch, retry: false });
    await expect(unwrap(client.GET('/api/v1/usage'))).rejects.toMatchObject({ status: 429, retryAfterSeconds: 0 });
    expect(got).toHaveLength(1);
  });

  it('an abort during the wait stops the retries', async () => {
    const { fetch, got } = service(json(429, { error: 'rate_limit_exceeded' }, { 'retry-after': '5' }));
    const client = createMessagingClient({ baseUrl: 'http://api.test', apiKey: 'sk_test', fetch });
    const controller = new AbortController();
    setTimeout(() => controller.abort(), 50);
    await expect(client.GET('/api/v1/usage', { signal: controller.signal })).rejects.toMatchObject({ name: 'AbortError' });
    expect(got).toHaveLength(1);
  });
});
