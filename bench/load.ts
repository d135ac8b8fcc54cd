import { Agent, request } from 'node:http';
import { summary } from './stats';

export interface LoadResult {
  count: number;
  seconds: number;
  perSecond: number;
  latency: { p50: number; p95: number; p99: number };
  statuses: Record<number, number>;
}

/**
 * Sends `count` requests from `concurrency` lanes over keep-alive connections and measures each one.
 * `body(i)` builds the i-th request body, so every request can carry its own idempotency key.
 */
export async function load(options: {
  url: string;
  path: string;
  key: string;
  count: number;
  concurrency: number;
  body: (index: number) => unknown;
}): Promise<LoadResult> {
  const target = new URL(options.path, options.url);
  const agent = new Agent({ keepAlive: true, maxSockets: options.concurrency });
  const latencies: number[] = [];
  const statuses: Record<number, number> = {};
  let next = 0;
  const one = (index: number) =>
    new Promise<void>((resolve, reject) => {
      const payload = JSON.stringify(options.body(index));
      const started = process.hrtime.bigint();
      const req = request(
        {
          host: target.hostname,
          port: target.port,
          path: target.pathname,
          method: 'POST',
          agent,
          headers: { authorization: `Bearer ${options.key}`, 'content-type': 'application/json', 'content-length': Buffer.byteLength(payload) },
        },
        (res) => {
          res.resume();
          res.on('end', () => {
            latencies.push(Number(process.hrtime.bigint() - started) / 1e6);
            statuses[res.statusCode ?? 0] = (statuses[res.statusCode ?? 0] ?? 0) + 1;
            resolve();
          });
        },
      );
      req.on('error', reject);
      req.end(payload);
    });
  const began = process.hrtime.bigint();
  await Promise.all(
    Array.from({ length: options.concurrency }, async () => {
      for (let index = next++; index < options.count; index = next++) await one(index);
    }),
  );
  const seconds = Number(process.hrtime.bigint() - began) / 1e9;
  agent.destroy();
  return { count: options.count, seconds, perSecond: options.count / seconds, latency: summary(latencies), statuses };
}
