import { API_ERROR_CODES, MessagingApiError, retryAfterSecondsOf, unwrap } from '../../packages/client/src';
import { errorBody } from '../../api/http/errors';
import { AppError, ERROR_CODES } from '../../core/errors';

function answer(status: number, body: unknown, headers: Record<string, string> = {}) {
  const response = new Response(body === undefined ? null : JSON.stringify(body), { status, headers });
  return { error: body, response };
}

describe('client errors', () => {
  it("the client's code list is the server's closed list, in the same order", () => {
    expect([...API_ERROR_CODES]).toEqual([...ERROR_CODES]);
  });

  it('a rendered AppError becomes a MessagingApiError with its code, message, details and request id', () => {
    const body = errorBody(new AppError('quota_exceeded', 'Monthly quota reached', { resource: 'messages', limit: 3000, used: 3000, remaining: 0, plan: 'free' }));
    const error = MessagingApiError.fromResponse(answer(402, body).response, body);
    expect(error).toBeInstanceOf(MessagingApiError);
    expect(error).toMatchObject({ status: 402, code: 'quota_exceeded', message: 'Monthly quota reached', details: { limit: 3000, plan: 'free' } });
  });

  it('a validation failure reads as validation_error with its field errors', () => {
    const body = errorBody(AppError.validation({ formErrors: [], fieldErrors: { to: ['Invalid address'] } }));
    const { response } = answer(422, body, { 'x-request-id': 'req-1' });
    const error = MessagingApiError.fromResponse(response, body);
    expect(error.code).toBe('validation_error');
    expect(error.fieldErrors).toEqual({ to: ['Invalid address'] });
    expect(error.message).toBe('Invalid request: to: Invalid address');
    expect(error.requestId).toBe('req-1');
  });

  it('a 429 carries retryAfterSeconds from its Retry-After header', () => {
    const body = errorBody(new AppError('rate_limit_exceeded', 'x', { limit: 10, retryAfter: 2 }));
    const error = MessagingApiError.fromResponse(answer(429, body, { 'retry-after': '2' }).response, body);
    expect(error).toMatchObject({ status: 429, code: 'rate_limit_exceeded', retryAfterSeconds: 2, details: { limit: 10, retryAfter: 2 }, retryable: true });
  });

  it('a code this client does not know yet is kept as given', () => {
    const error = MessagingApiError.fromResponse(answer(409, { error: 'brand_new_code', message: 'm' }).response, { error: 'brand_new_code', message: 'm' });
    expect(error.code).toBe('brand_new_code');
  });

  it('a body that is not the error shape is unexpected_response, keeping the status', () => {
    const error = MessagingApiError.fromResponse(new Response('<html>bad gateway</html>', { status: 502 }), '<html>bad gateway</html>');
    expect(error).toMatchObject({ status: 502, code: 'unexpected_response', body: '<html>bad gateway</html>' });
  });

  it('unwrap gives the data of a 2xx and throws the typed error otherwise', async () => {
    expect(unwrap({ data: { id: 'a' }, response: new Response('{}', { status: 202 }) })).toEqual({ id: 'a' });
    expect(() => unwrap(answer(404, { error: 'not_found', message: 'Message not found' }))).toThrow(expect.objectContaining({ status: 404, code: 'not_found' }));
    // An error answer without a body: openapi-fetch leaves error undefined, the status still decides.
    expect(() => unwrap({ error: undefined, response: new Response(null, { status: 401 }) })).toThrow(expect.objectContaining({ status: 401, code: 'unexpected_response' }));
    await expect(unwrap(Promise.resolve({ data: 1, response: new Response('1') }))).resolves.toBe(1);
  });

  it('unwrap of a call that got no response throws network_error with status 0, an abort stays an abort', async () => {
    await expect(unwrap(Promise.reject(new TypeError('fetch failed', { cause: new Error('connect ECONNREFUSED 127.0.0.1:1') })))).rejects.toMatchObject({
      name: 'MessagingApiError', status: 0, code: 'network_error', message: 'No response from the Messaging API: connect ECONNREFUSED 127.0.0.1:1',
    });
    const abort = new DOMException('aborted', 'AbortError');
    await expect(unwrap(Promise.reject(abort))).rejects.toBe(abort);
  });
});

describe('Retry-After parsing', () => {
  const now = Date.parse('2026-01-01T00:00:00Z');
  it('reads delay-seconds', () => {
    expect(retryAfterSecondsOf('3', now)).toBe(3);
    expect(retryAfterSecondsOf(' 0 ', now)).toBe(0);
  });
  it('reads an HTTP date as the seconds until it, rounded up, and a past date as 0', () => {
    expect(retryAfterSecondsOf('Thu, 01 Jan 2026 00:00:05 GMT', now)).toBe(5);
    expect(retryAfterSecondsOf(new Date(now + 1500).toUTCString(), now)).toBe(1);
    expect(retryAfterSecondsOf('Wed, 31 Dec 2025 23:59:00 GMT', now)).toBe(0);
  });
  it('gives undefined for an absent or unreadable header', () => {
    expect(retryAfterSecondsOf(null, now)).toBeUndefined();
    expect(retryAfterSecondsOf('soon', now)).toBeUndefined();
    expect(retryAfterSecondsOf('-1', now)).toBeUndefined();
  });
});
