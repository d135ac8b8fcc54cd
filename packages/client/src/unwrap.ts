import { MessagingApiError } from './errors';

/** What every openapi-fetch call resolves to: the parsed body on a 2xx (`data`), or on any other (`error`). */
export interface FetchResult<T> {
  data?: T;
  error?: unknown;
  response: Response;
}

/**
 * The body of a successful answer, or a thrown MessagingApiError carrying the service's code. Given the
 * call's promise instead of its result, it also turns a request that got no response into a
 * MessagingApiError with status 0 and code `network_error` (a client from createMessagingClient already
 * throws those; a plain openapi-fetch client throws the fetch TypeError, which this converts).
 *
 *   const sent = unwrap(await client.POST('/api/v1/emails', { body }));
 *   const sent = await unwrap(client.POST('/api/v1/emails', { body }));
 */
export function unwrap<T>(result: FetchResult<T>): T;
export function unwrap<T>(result: Promise<FetchResult<T>>): Promise<T>;
export function unwrap<T>(result: FetchResult<T> | Promise<FetchResult<T>>): T | Promise<T> {
  if (result instanceof Promise) {
    return result.then(unwrapResult, (err: unknown) => {
      throw asClientError(err);
    });
  }
  return unwrapResult(result);
}

function unwrapResult<T>(result: FetchResult<T>): T {
  // By status, not by `error`: openapi-fetch leaves `error` undefined when an error answer has no body.
  if (!result.response.ok) throw MessagingApiError.fromResponse(result.response, result.error);
  return result.data as T;
}

/**
 * A failure before any response became a MessagingApiError(network_error); the caller's own abort stays what
 * it is, so `signal.abort()` still reads as an AbortError.
 */
export function asClientError(err: unknown): unknown {
  if (err instanceof MessagingApiError) return err;
  // By name: a DOMException from another realm (a test VM, a polyfill) is not `instanceof Error`.
  if (typeof err === 'object' && err !== null && (err as { name?: unknown }).name === 'AbortError') return err;
  return MessagingApiError.network(err);
}
