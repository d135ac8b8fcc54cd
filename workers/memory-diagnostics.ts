import { once } from 'node:events';
import { createWriteStream, mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { pipeline } from 'node:stream/promises';
import { writeHeapSnapshot } from 'node:v8';
import type { Worker as ThreadWorker } from 'node:worker_threads';
import type { Worker } from '@temporalio/worker';
import type { Logger } from 'pino';
import { Gauge, type Registry } from 'prom-client';

/** A Temporal worker by the queue it polls, as the worker process names them in its metrics. */
export interface NamedWorker {
  queue: string;
  worker: Worker;
}

/**
 * The threads the SDK runs this worker's workflows in (`workflowThreadPoolSize`, 1 with the default reused
 * V8 context). Their heaps are separate isolates: `process.memoryUsage().heapUsed` and prom-client's heap
 * gauges see only the main thread, so the workflow cache's memory reads as "outside the heap" unless it is
 * asked of the threads themselves. The SDK does not export them; this reads its private fields defensively
 * and answers none when a version moves them (workers without workflows have none either).
 */
export function workflowThreads(worker: Worker): ThreadWorker[] {
  const creator: unknown = Reflect.get(worker, 'workflowCreator');
  const clients: unknown = creator && typeof creator === 'object' ? Reflect.get(creator, 'workerThreadClients') : undefined;
  if (!Array.isArray(clients)) return [];
  return clients
    .map((client: unknown) => (client && typeof client === 'object' ? Reflect.get(client, 'workerThread') : undefined))
    .filter((thread): thread is ThreadWorker => Boolean(thread) && typeof (thread as ThreadWorker).getHeapStatistics === 'function');
}

/**
 * Gauges for where the worker's memory is: the workflows each Temporal worker keeps cached (bounded by
 * `maxCachedWorkflows`), the heap of its workflow threads, and the main thread's ArrayBuffers (prom-client
 * reports heap and `external` already). The soak benchmark reads them beside resident memory.
 */
export function registerMemoryMetrics(registry: Registry, workers: NamedWorker[]): void {
  new Gauge({
    name: 'temporal_worker_cached_workflows',
    help: 'Workflows in the Temporal worker\'s sticky cache, by task queue',
    labelNames: ['queue'],
    registers: [registry],
    collect() {
      for (const { queue, worker } of workers) this.set({ queue }, worker.getStatus().numCachedWorkflows);
    },
  });
  new Gauge({
    name: 'temporal_workflow_thread_heap_used_bytes',
    help: 'Used V8 heap of the threads that run workflows, by task queue',
    labelNames: ['queue'],
    registers: [registry],
    async collect() {
      for (const { queue, worker } of workers) {
        const threads = workflowThreads(worker);
        if (threads.length === 0) continue;
        // A thread that is exiting (shutdown) rejects: it is counted as nothing rather than failing the scrape.
        const stats = await Promise.all(threads.map((thread) => thread.getHeapStatistics().catch(() => null)));
        this.set({ queue }, stats.reduce((sum, stat) => sum + (stat?.used_heap_size ?? 0), 0));
      }
    },
  });
  new Gauge({
    name: 'nodejs_array_buffers_bytes',
    help: 'Memory of the main thread\'s ArrayBuffers and Buffers (process.memoryUsage().arrayBuffers)',
    registers: [registry],
    collect() {
      this.set(process.memoryUsage().arrayBuffers);
    },
  });
}

/**
 * Writes V8 heap snapshots of the main thread and of every workflow thread into `dir`, and answers their
 * paths. A snapshot holds whatever the heap holds (message bodies, keys being used): owner-only files in an
 * owner-only directory. It pauses the thread for seconds and costs about its heap again in memory.
 */
export async function writeHeapSnapshots(dir: string, workers: NamedWorker[]): Promise<string[]> {
  mkdirSync(dir, { recursive: true, mode: 0o700 });
  const stamp = new Date().toISOString().replace(/[:.]/g, '-');
  const written = [writeHeapSnapshot(join(dir, `${stamp}-main.heapsnapshot`))];
  for (const { queue, worker } of workers) {
    for (const [index, thread] of workflowThreads(worker).entries()) {
      const file = join(dir, `${stamp}-${queue}-workflows-${index}.heapsnapshot`);
      const out = createWriteStream(file, { mode: 0o600 });
      await once(out, 'open');
      await pipeline(await thread.getHeapSnapshot(), out);
      written.push(file);
    }
  }
  return written;
}

/**
 * On SIGUSR2, writes the heap snapshots into `dir` (`WORKER_HEAP_SNAPSHOT_DIR`; off by default): a diagnostic
 * for soaks (bench/soak.ts), not for a production worker left on. The caller keeps SIGUSR2 out of the
 * Temporal runtime's shutdown signals, which include it by default.
 */
export function writeHeapSnapshotsOnSignal(dir: string, workers: NamedWorker[], logger: Logger): void {
  let taking = false;
  process.on('SIGUSR2', () => {
    if (taking) return;
    taking = true;
    writeHeapSnapshots(dir, workers).then(
      (files) => logger.warn({ files }, 'heap snapshots written'),
      (error: unknown) => logger.error({ err: error }, 'heap snapshot failed'),
    ).finally(() => {
      taking = false;
    });
  });
}
