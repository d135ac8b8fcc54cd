import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Registry } from 'prom-client';
import { withMessagingMetrics } from '../services/metrics/registry';

/**
 * The worker's (and the inbound SMTP process's) Prometheus endpoint, on a port of its own (loopback by
 * default): the send path's counters (sends, provider calls, unknown delivery outcomes, reconciler repairs,
 * outbox gauges) live in the worker process, not the API. It serves the process's registry and the service's
 * own metrics (services/metrics/registry.ts).
 */
export async function startMetricsServer(registry: Registry, host: string, port: number): Promise<{ port: number; close: () => Promise<void> }> {
  const server: Server = createServer((req, res) => {
    if (req.method !== 'GET' || req.url !== '/metrics') {
      res.writeHead(404).end();
      return;
    }
    // Merged at each scrape: the process's loops register their gauges after the server starts.
    const served = withMessagingMetrics(registry);
    served.metrics().then(
      (text) => res.writeHead(200, { 'content-type': served.contentType }).end(text),
      () => res.writeHead(500).end(),
    );
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, host, resolve);
  });
  return {
    port: (server.address() as AddressInfo).port,
    close: () => new Promise((resolve) => server.close(() => resolve())),
  };
}
