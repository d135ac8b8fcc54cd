import type { Resource } from '@opentelemetry/resources';
import type { SpanProcessor } from '@opentelemetry/sdk-trace-base';
import { type Config, tracesEndpoint } from '../core/config';

/**
 * OpenTelemetry tracing of a process, off unless an OTLP endpoint is configured (docs/observability.md, Traces).
 * The SDK, the exporter and the resource are loaded here with dynamic imports, only when tracing is on: a
 * process without an endpoint never loads them. What the rest of the code touches is `@opentelemetry/api`,
 * the vendor-neutral facade whose calls are no-ops until a provider is registered here.
 */
export interface Tracing {
  /**
   * The processor every span leaves through, also handed to the Temporal worker's workflow-span sink
   * (workflow code runs in a sandbox and exports its spans through it).
   */
  spanProcessor: SpanProcessor;
  resource: Resource;
  /** Exports what is buffered now, and waits for the collector's answer. */
  flush: () => Promise<void>;
  /** Flushes, then unregisters the global provider, context manager and propagator. */
  shutdown: () => Promise<void>;
}

export type TracingSettings = Pick<Config, 'OTEL_EXPORTER_OTLP_ENDPOINT' | 'OTEL_EXPORTER_OTLP_TRACES_ENDPOINT' | 'OTEL_SDK_DISABLED' | 'OTEL_SERVICE_NAME'>;

// One per process: OpenTelemetry's provider, context manager and propagator are process-global anyway, and
// the worker's Temporal wiring (workers/tracing.ts) reads it rather than being handed it through every caller.
let active: Tracing | null = null;

/** The process's tracing when it was started, else null (tracing off). */
export function activeTracing(): Tracing | null {
  return active;
}

/**
 * Starts tracing when the config asks for it (an endpoint, OTEL_SDK_DISABLED not true) and answers null
 * otherwise, having loaded nothing. Spans are batched (the SDK's BatchSpanProcessor: at most every 5 s or
 * 512 spans) and sent as OTLP/HTTP JSON. `processName` names the service when OTEL_SERVICE_NAME is unset.
 * Started twice in one process (a test running the API and the worker together), the first one serves both.
 */
export async function startTracing(config: TracingSettings, processName: string): Promise<Tracing | null> {
  const url = tracesEndpoint(config);
  if (!url) return null;
  if (active) return active;
  const [{ NodeTracerProvider }, { BatchSpanProcessor }, { OTLPTraceExporter }, { Resource }, { ATTR_SERVICE_NAME }, api] = await Promise.all([
    import('@opentelemetry/sdk-trace-node'),
    import('@opentelemetry/sdk-trace-base'),
    import('@opentelemetry/exporter-trace-otlp-http'),
    import('@opentelemetry/resources'),
    import('@opentelemetry/semantic-conventions'),
    import('@opentelemetry/api'),
  ]);
  const resource = new Resource({ [ATTR_SERVICE_NAME]: config.OTEL_SERVICE_NAME ?? `messaging-${processName}` });
  const spanProcessor = new BatchSpanProcessor(new OTLPTraceExporter({ url }));
  const provider = new NodeTracerProvider({ resource, spanProcessors: [spanProcessor] });
  // AsyncLocalStorage context (a span is the parent of whatever its callback awaits) and W3C traceparent.
  provider.register();
  const tracing: Tracing = {
    spanProcessor,
    resource,
    flush: () => provider.forceFlush(),
    shutdown: async () => {
      if (active !== tracing) return;
      active = null;
      await provider.shutdown();
      api.trace.disable();
      api.context.disable();
      api.propagation.disable();
    },
  };
  active = tracing;
  return tracing;
}
