import { context, type Link, propagation, ROOT_CONTEXT, SpanKind, SpanStatusCode, trace } from '@opentelemetry/api';
import type { RequestHandler } from 'express';

const tracer = trace.getTracer('messaging-api');

/**
 * One SERVER span per request, the root of the trace a send follows to its provider call
 * (docs/observability.md, Traces); mounted first by app.ts, and only when tracing is on.
 *
 * Our own middleware rather than @opentelemetry/instrumentation-http/-express: those patch `http` and
 * `express` as they are loaded, so they must be registered before the first import (a `--require` preload),
 * which neither `tsx api/main.ts` nor the tests' in-process API (test/helpers/api-harness.ts) do; and this
 * API wants one span per request with the route pattern, not a span per middleware.
 *
 * A caller's own `traceparent` is linked, not adopted as parent: the API is public, and a parent's
 * sampled flag would let any caller switch our tracing of its requests off (or on). Attributes are the
 * method, the route pattern and the status: never the raw path (tokens of tracking and unsubscribe links
 * are in it), the query, headers or the body.
 */
export function requestSpans(): RequestHandler {
  return (req, res, next) => {
    const caller = trace.getSpanContext(propagation.extract(ROOT_CONTEXT, req.headers));
    const links: Link[] = caller ? [{ context: caller }] : [];
    const span = tracer.startSpan(req.method, { kind: SpanKind.SERVER, root: true, links, attributes: { 'http.request.method': req.method } }, ROOT_CONTEXT);
    res.on('close', () => {
      // The route pattern, as the metrics label it (api/http/metrics.ts): ids never name a span.
      const route = req.route ? `${req.baseUrl}${String(req.route.path)}` : null;
      if (route) {
        span.updateName(`${req.method} ${route}`);
        span.setAttribute('http.route', route);
      }
      span.setAttribute('http.response.status_code', res.statusCode);
      if (res.statusCode >= 500) span.setStatus({ code: SpanStatusCode.ERROR });
      span.end();
    });
    context.with(trace.setSpan(ROOT_CONTEXT, span), next);
  };
}
