import { Client, Connection, type ConnectionOptions, type WorkflowClientInterceptor } from '@temporalio/client';
import type { Config } from '../core/config';

/**
 * The one place that knows how this deployment reaches Temporal and builds its clients: every process (the
 * API, the workers, the inbound MX, the admin scripts, benchmarks and test helpers) goes through these, so a
 * new way to connect (TLS, an API key for a cluster) is added here once and reaches them all.
 */
export type TemporalSettings = Pick<Config, 'TEMPORAL_ADDRESS' | 'TEMPORAL_NAMESPACE'> & TemporalTransport;

/** How to reach the server beyond its address; absent means plain gRPC, as the dev server speaks. */
type TemporalTransport = Partial<Pick<Config, 'TEMPORAL_TLS' | 'TEMPORAL_API_KEY'>>;

/**
 * What a connection needs from the config; workers pass the same to their NativeConnection. An API key is
 * never sent in the clear, so it turns TLS on by itself.
 */
export function temporalConnectionOptions(config: Pick<Config, 'TEMPORAL_ADDRESS'> & TemporalTransport): { address: string; tls?: boolean; apiKey?: string } {
  return {
    address: config.TEMPORAL_ADDRESS,
    ...((config.TEMPORAL_TLS || config.TEMPORAL_API_KEY) && { tls: true }),
    ...(config.TEMPORAL_API_KEY && { apiKey: config.TEMPORAL_API_KEY }),
  };
}

// The OpenTelemetry client interceptor, once tracing is on in this process (traceWorkflowClients); none before.
let workflowInterceptors: WorkflowClientInterceptor[] = [];

/**
 * Every client made from now on traces what it asks of Temporal (a workflow start is a span, passed to the
 * workflow in its headers: docs/observability.md, Traces). Called by a process that started tracing
 * (infra/tracing.ts); the interceptor package is loaded only then. `false` turns it off again (tests).
 */
export async function traceWorkflowClients(on: boolean): Promise<void> {
  if (!on) {
    workflowInterceptors = [];
    return;
  }
  const { OpenTelemetryWorkflowClientInterceptor } = await import('@temporalio/interceptors-opentelemetry/lib/client');
  workflowInterceptors = [new OpenTelemetryWorkflowClientInterceptor()];
}

/** A client of the configured namespace over a connection made elsewhere (the API's, a test's). */
export function createTemporalClient(connection: Connection, config: Pick<Config, 'TEMPORAL_NAMESPACE'>): Client {
  return new Client({ connection, namespace: config.TEMPORAL_NAMESPACE, ...(workflowInterceptors.length > 0 && { interceptors: { workflow: workflowInterceptors } }) });
}

/** Connects now and fails if Temporal does not answer (workers at start-up, scripts, benchmarks, tests). */
export async function connectTemporal(config: TemporalSettings, options: Pick<ConnectionOptions, 'connectTimeout'> = {}): Promise<Client> {
  return createTemporalClient(await Connection.connect({ ...temporalConnectionOptions(config), ...options }), config);
}

/**
 * A client whose connection is made on first use, with the SDK's retries: a process that only sometimes talks
 * to Temporal (the inbound MX, activities' ports) starts while Temporal is down.
 */
export function lazyTemporalClient(config: TemporalSettings): Client {
  return createTemporalClient(Connection.lazy(temporalConnectionOptions(config)), config);
}

/**
 * The API's connection to Temporal. Lazy, so the API starts and accepts work (the database row is the
 * point of acceptance) while Temporal is down. No retry interceptor: a request must not wait out gRPC
 * retries; what cannot be started at once is left to the outbox dispatcher, and a readiness probe must
 * answer for now, not after retries that would outlive the request.
 */
export function connectTemporalForApi(config: Pick<Config, 'TEMPORAL_ADDRESS'> & TemporalTransport): Connection {
  return Connection.lazy({ ...temporalConnectionOptions(config), interceptors: [] });
}
