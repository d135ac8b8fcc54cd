import createFetchClient, { type Client } from 'openapi-fetch';
import { idempotencyKeys } from './idempotency';
import { retryingFetch, type RetryOptions } from './retries';
import type { MessagingPaths } from './send-paths';
import { asClientError } from './unwrap';

export type { paths, components, operations } from './schema';
export type { MessagingPaths, SendEmailBatchInput, SendEmailInput, SendMessageInput } from './send-paths';
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
export { idempotencyKeys, type IdempotencyOptions } from './idempotency';
export { paginate, type PaginateParams, type PaginatedItem, type PaginatedPath } from './pagination';
export { DEFAULT_RETRY_OPTIONS, retryDelayMs, type RetryEvent, type RetryOptions } from './retries';
export {
  WEBHOOK_EVENT_TYPES,
  WebhookVerificationError,
  verifyWebhook,
  type DomainEventData,
  type ReceivedEventData,
  type SentMessageEventData,
  type VerifyWebhookInput,
  type WebhookEvent,
  type WebhookEventType,
} from './webhooks';

export interface MessagingClientOptions {
  /** Where the service runs, without /api/v1 (the document's paths carry it): `http://localhost:3000`. */
  baseUrl: string;
  /** A workspace API key (`sk_...`); the workspace is always the key's own. */
  apiKey: string;
  /** A fetch of your own (tests, proxies); the global one otherwise. */
  fetch?: (request: Request) => Promise<Response>;
  /**
   * Retries of 429 and 503 answers and of lost responses where a repeat is safe (see RetryOptions);
   * `false` sends every request once.
   */
  retry?: RetryOptions | false;
  /**
   * Sends without an idempotencyKey get a generated one (default true), so a retried send is accepted at
   * most once. `false` sends bodies as given: a send then needs its own key (the service requires one).
   */
  idempotencyKeys?: boolean | { generateKey: () => string };
  /** Headers added to every request (a User-Agent, a tracing header). */
  headers?: Record<string, string>;
}

export type MessagingClient = Client<MessagingPaths>;

/**
 * A client whose every method and body is typed by the served OpenAPI document, with an idempotency key on
 * every send, retries that honour Retry-After, and network failures thrown as MessagingApiError.
 */
export function createMessagingClient(options: MessagingClientOptions): MessagingClient {
  const baseFetch = options.fetch ?? ((request: Request) => globalThis.fetch(request));
  const client = createFetchClient<MessagingPaths>({
    baseUrl: options.baseUrl.replace(/\/+$/, ''),
    fetch: options.retry === false ? baseFetch : retryingFetch(baseFetch, options.retry),
    headers: options.headers,
  });
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
  if (options.idempotencyKeys !== false) {
    client.use(idempotencyKeys(typeof options.idempotencyKeys === 'object' ? options.idempotencyKeys : {}));
  }
  return client;
}
