import type { RequestHandler } from 'express';
import { Histogram, Registry } from 'prom-client';
import { withMessagingMetrics } from '../../services/metrics/registry';

export interface HttpMetrics {
  registry: Registry;
  observe: RequestHandler;
}

/**
 * A registry per app (not the global one), so several apps in one process (tests) do not collide. Node's own
 * figures (CPU, memory, event-loop lag) are the process's, collected once by its entry (api/main.ts) and served
 * beside: prom-client's collector starts an event-loop monitor that nothing stops, and made per app it kept
 * each app of a test process alive, about 35 MB a test file (docs/testing.md).
 */
export function createHttpMetrics(processMetrics?: Registry): HttpMetrics {
  const registry = new Registry();
  const duration = new Histogram({
    name: 'http_request_duration_seconds',
    help: 'HTTP request latency by route and status',
    labelNames: ['method', 'route', 'status'] as const,
    buckets: [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5],
    registers: [registry],
  });
  const observe: RequestHandler = (req, res, next) => {
    const end = duration.startTimer();
    res.on('finish', () => {
      // The route pattern, not the raw path, keeps the label set small (ids never become labels).
      const route = req.route ? `${req.baseUrl}${String(req.route.path)}` : 'unmatched';
      end({ method: req.method, route, status: String(res.statusCode) });
    });
    next();
  };
  // The scrape serves the service's own metrics (acceptances, SES notifications) beside the HTTP ones.
  return { registry: withMessagingMetrics(processMetrics ? Registry.merge([registry, processMetrics]) : registry), observe };
}
