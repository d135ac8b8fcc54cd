import { Connection } from '@temporalio/client';

/**
 * The API's connection to Temporal. Lazy, so the API starts and accepts work (the database row is the
 * point of acceptance) while Temporal is down. No retry interceptor: a request must not wait out gRPC
 * retries; what cannot be started at once is left to the outbox dispatcher, and a readiness probe must
 * answer for now, not after retries that would outlive the request.
 */
export function connectTemporalForApi(address: string): Connection {
  return Connection.lazy({ address, interceptors: [] });
}
