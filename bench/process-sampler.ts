import { readdirSync, readFileSync, readlinkSync } from 'node:fs';

/**
 * What the soak benchmark samples of one process from outside it: its Prometheus metrics (heap, event-loop
 * lag, active handles: prom-client's default metrics, which the API serves on /metrics and the worker on
 * WORKER_METRICS_PORT), and its TCP connections from /proc, by the port they reach.
 */
export type ProcessSample = Record<string, number>;

/** prom-client's default metrics this benchmark follows, by the name it prints. */
const METRICS: Record<string, string> = {
  heapUsedMB: 'nodejs_heap_size_used_bytes',
  heapTotalMB: 'nodejs_heap_size_total_bytes',
  externalMB: 'nodejs_external_memory_bytes',
  arrayBuffersMB: 'nodejs_array_buffers_bytes',
  rssMB: 'process_resident_memory_bytes',
  // The worker's own (workers/memory-diagnostics.ts): its workflow threads are isolates the heap gauges above miss.
  workflowHeapMB: 'temporal_workflow_thread_heap_used_bytes',
  cachedWorkflows: 'temporal_worker_cached_workflows',
  lagP99Ms: 'nodejs_eventloop_lag_p99_seconds',
  handles: 'nodejs_active_handles_total',
  openFds: 'process_open_fds',
};

function metricValue(text: string, name: string): number {
  // An unlabelled sample line, or the sum of a labelled family (active handles come by type).
  let total = 0;
  let seen = false;
  for (const line of text.split('\n')) {
    if (line.startsWith(`${name} `) || line.startsWith(`${name}{`)) {
      total += Number(line.slice(line.lastIndexOf(' ') + 1));
      seen = true;
    }
  }
  return seen ? total : Number.NaN;
}

export async function metricsOf(url: string): Promise<ProcessSample> {
  const text = await (await fetch(url)).text();
  const sample: ProcessSample = {};
  for (const [label, name] of Object.entries(METRICS)) {
    const value = metricValue(text, name);
    sample[label] = label.endsWith('MB') ? value / 2 ** 20 : label.endsWith('Ms') ? value * 1000 : value;
  }
  return sample;
}

/** A /proc read that answers null once the process (or the file) is gone. */
function attempt<T>(read: () => T): T | null {
  try {
    return read();
  } catch {
    return null;
  }
}

/** The machine's established TCP sockets: inode → the remote port, from /proc/net/tcp{,6}. */
function remotePortsByInode(): Map<string, number> {
  const byInode = new Map<string, number>();
  for (const file of ['/proc/net/tcp', '/proc/net/tcp6']) {
    const text = attempt(() => readFileSync(file, 'utf8')) ?? '';
    for (const line of text.split('\n').slice(1)) {
      const fields = line.trim().split(/\s+/);
      // 01 = ESTABLISHED; listening and closing sockets are not connections.
      if (fields.length < 10 || fields[3] !== '01') continue;
      byInode.set(fields[9], parseInt(fields[2].split(':')[1], 16));
    }
  }
  return byInode;
}

/** Established TCP connections of `pid`, counted by the service port they reach (others under `other`). */
export function connectionsOf(pid: number, ports: Record<string, number>): ProcessSample {
  const byInode = remotePortsByInode();
  const counts: ProcessSample = Object.fromEntries([...Object.keys(ports), 'other', 'sockets'].map((name) => [name, 0]));
  for (const fd of attempt(() => readdirSync(`/proc/${pid}/fd`)) ?? []) {
    const target = attempt(() => readlinkSync(`/proc/${pid}/fd/${fd}`)) ?? '';
    const inode = /^socket:\[(\d+)\]$/.exec(target)?.[1];
    if (!inode) continue;
    counts.sockets += 1;
    const port = byInode.get(inode);
    if (port === undefined) continue;
    const name = Object.entries(ports).find(([, value]) => value === port)?.[0] ?? 'other';
    counts[name] += 1;
  }
  return counts;
}

/** Least-squares slope of `values` over `hours` (per hour), NaN with fewer than two finite points. */
export function slopePerHour(hours: number[], values: number[]): number {
  const points = hours.map((x, i) => [x, values[i]]).filter(([, y]) => Number.isFinite(y));
  if (points.length < 2) return Number.NaN;
  const meanX = points.reduce((sum, [x]) => sum + x, 0) / points.length;
  const meanY = points.reduce((sum, [, y]) => sum + y, 0) / points.length;
  const covariance = points.reduce((sum, [x, y]) => sum + (x - meanX) * (y - meanY), 0);
  const variance = points.reduce((sum, [x]) => sum + (x - meanX) ** 2, 0);
  return variance === 0 ? Number.NaN : covariance / variance;
}
