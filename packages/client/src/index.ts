import createFetchClient, { type Client } from 'openapi-fetch';
import { asClientError } from './unwrap';
import type { paths } from './schema';

export type { paths, components, operations } from './schema';
export {
  API_ERROR_CODES,
  MessagingApiError,
  isMessagingApiError,
  retryAfterSecondsOf,
  type ApiErrorCode,
  type ClientErrorCode,
  type MessagingApiErrorInit,
  type MessagingErrorCode,
  type ValidationIssues,
} from './errors';
export { unwrap, type FetchResult } from './unwrap';

export interface MessagingClientOptions {
  /** Where the service runs, without /api/v1 (the document's paths carry it): `http://localhost:3000`. */
  baseUrl: string;
  /** A workspace API key (`sk_...`); the workspace is always the key's own. */
  apiKey: string;
  /** A fetch of your own (tests, proxies); the global one otherwise. */
  fetch?: typeof fetch;
}

export type MessagingClient = Client<paths>;

/** A client whose every method and body is typed by the served OpenAPI document. */
export function createMessagingClient(options: MessagingClientOptions): MessagingClient {
  const client = createFetchClient<paths>({ baseUrl: options.baseUrl.replace(/\/+$/, ''), fetch: options.fetch });
  client.use({
    onRequest({ request }) {
      request.headers.set('authorization', `Bearer ${options.apiKey}`);
      return request;
    },
    // No response at all: a MessagingApiError(network_error) rather than fetch's bare TypeError.
    onError({ error }) {
      const converted = asClientError(error);
      return converted instanceof Error ? converted : undefined;
    },
  });
  return client;
}
