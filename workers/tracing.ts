import type { InjectedSinks, WorkerInterceptors } from '@temporalio/worker';
import type { OpenTelemetrySinks } from '@temporalio/interceptors-opentelemetry/lib/workflow';
import { activeTracing } from '../infra/tracing';

/** What a worker adds to its options when tracing is on: the package's interceptors, and the sink of workflow spans. */
export interface WorkerTracing {
  interceptors: WorkerInterceptors;
  sinks: InjectedSinks<OpenTelemetrySinks>;
}

/**
 * The Temporal side of tracing (docs/observability.md, Traces), from @temporalio/interceptors-opentelemetry,
 * or nothing when tracing is off in this process (infra/tracing.ts was not started, or found no endpoint):
 * then neither the package nor its workflow module is loaded, and the workflow bundle is the usual one.
 *
 * - the workflow interceptors module, bundled with the workflows: RunWorkflow and StartActivity spans,
 *   parented by the start's span from the workflow's headers, and the activity's headers carrying theirs;
 * - the activity interceptors: RunActivity, parented by StartActivity, and active while the activity runs
 *   (so the provider's span, providers/send-span.ts, is its child); log lines get the trace and span ids;
 * - the `exporter` sink: workflow code cannot export, so its finished spans leave through the process's
 *   span processor (the sink is not called on replay, so a replayed workflow exports nothing twice).
 */
export async function workerTracing(): Promise<WorkerTracing | null> {
  const tracing = activeTracing();
  if (!tracing) return null;
  const { OpenTelemetryActivityInboundInterceptor, OpenTelemetryActivityOutboundInterceptor, makeWorkflowExporter } = await import(
    '@temporalio/interceptors-opentelemetry/lib/worker'
  );
  return {
    interceptors: {
      activity: [(ctx) => ({ inbound: new OpenTelemetryActivityInboundInterceptor(ctx), outbound: new OpenTelemetryActivityOutboundInterceptor(ctx) })],
    },
    sinks: { exporter: makeWorkflowExporter(tracing.spanProcessor, tracing.resource) },
  };
}
