import { context, type Link, propagation, ROOT_CONTEXT, SpanKind, trace } from '@opentelemetry/api';

/*
 * A request's trace context carried with the message it accepted (the `traceparent` column, migration 0042):
 * the API only writes the outbox row and the dispatcher starts the workflow later, in another process, so the
 * workflow joins the request's trace through the row. Built on @opentelemetry/api alone, whose calls are
 * no-ops while no tracer provider is registered (infra/tracing.ts): with tracing off the capture answers null
 * and the restore calls straight through.
 */

/** The W3C `traceparent` of the span active now, or null (tracing off, or no span, or not sampled). */
export function currentTraceparent(): string | null {
  const span = trace.getActiveSpan();
  if (!span?.isRecording()) return null;
  const carrier: Record<string, string> = {};
  propagation.inject(context.active(), carrier);
  return carrier.traceparent ?? null;
}

/** Runs `fn` as part of the trace `traceparent` names (the Temporal client interceptor then starts its span under it). */
export function withTraceparent<T>(traceparent: string | null | undefined, fn: () => T): T {
  if (!traceparent) return fn();
  return context.with(propagation.extract(ROOT_CONTEXT, { traceparent }), fn);
}

const tracer = trace.getTracer('messaging-dispatch');

/**
 * Runs `fn` in a span of its own that links to each of the traces `traceparents` name: a batch workflow
 * carries messages of many requests, so it cannot be the child of one; each request's trace is found from
 * the batch through its link (and the batch from the request by the message id). No span without a link.
 */
export async function withLinkedSpan<T>(name: string, traceparents: ReadonlyArray<string | null | undefined>, attributes: Record<string, string | number>, fn: () => Promise<T>): Promise<T> {
  const links = traceparents.flatMap((traceparent): Link[] => {
    const spanContext = traceparent ? trace.getSpanContext(propagation.extract(ROOT_CONTEXT, { traceparent })) : undefined;
    return spanContext ? [{ context: spanContext }] : [];
  });
  if (links.length === 0) return fn();
  return tracer.startActiveSpan(name, { kind: SpanKind.PRODUCER, links, attributes, root: true }, ROOT_CONTEXT, async (span) => {
    try {
      return await fn();
    } finally {
      span.end();
    }
  });
}
