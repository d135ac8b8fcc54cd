import { createMessagingClient, MessagingApiError, unwrap, type RetryEvent } from '../../packages/client/src';
import { type ApiHarness, startApi } from '../helpers/api-harness';
import { createTestWorkspace } from '../helpers/workspaces';

/** The client's retries against the API's real per-key rate limit (Redis, one-second windows). */
describe('the typed client under the rate limit', () => {
  let api: ApiHarness;
  beforeAll(async () => {
    // Two requests a second per key: a burst of six is three windows.
    api = await startApi({ RATE_LIMIT_PER_SECOND: '2' });
  });
  afterAll(() => api.close());

  it("a burst past the key's limit is answered 429 with Retry-After; the client waits exactly that and every call succeeds", async () => {
    const { apiKey } = await createTestWorkspace(api);
    const answered: Array<{ status: number; retryAfter: string | null }> = [];
    const retries: RetryEvent[] = [];
    const client = createMessagingClient({
      baseUrl: api.url,
      apiKey,
      retry: { maxAttempts: 5, onRetry: (retry) => retries.push(retry) },
      fetch: async (request) => {
        const response = await fetch(request);
        answered.push({ status: response.status, retryAfter: response.headers.get('retry-after') });
        return response;
      },
    });
    const started = Date.now();
    const usages = await Promise.all(Array.from({ length: 6 }, () => unwrap(client.GET('/api/v1/usage'))));
    const elapsed = Date.now() - started;

    expect(usages.map((usage) => usage.plan)).toEqual(Array(6).fill('free'));
    const refused = answered.filter((answer) => answer.status === 429);
    expect(refused.length).toBeGreaterThanOrEqual(4);
    expect(new Set(refused.map((answer) => answer.retryAfter))).toEqual(new Set(['1']));
    expect(retries).toHaveLength(refused.length);
    expect(retries.every((retry) => retry.status === 429 && retry.delayMs === 1000)).toBe(true);
    // Two more windows at least: no retry went out before its Retry-After.
    expect(elapsed).toBeGreaterThanOrEqual(1900);
  });

  it('with retries off, the 429 reaches the caller as rate_limit_exceeded with retryAfterSeconds', async () => {
    const { apiKey } = await createTestWorkspace(api);
    const client = createMessagingClient({ baseUrl: api.url, apiKey, retry: false });
    const outcomes = await Promise.allSettled(Array.from({ length: 4 }, () => unwrap(client.GET('/api/v1/usage'))));
    const refusals = outcomes.flatMap((outcome) => (outcome.status === 'rejected' ? [outcome.reason as unknown] : []));
    expect(refusals.length).toBeGreaterThanOrEqual(2);
    for (const refusal of refusals) {
      expect(refusal).toBeInstanceOf(MessagingApiError);
      expect(refusal).toMatchObject({ status: 429, code: 'rate_limit_exceeded', retryAfterSeconds: 1, details: { limit: 2, retryAfter: 1 } });
    }
  });
});
