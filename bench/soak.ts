import { randomUUID } from 'node:crypto';
import { readdirSync, statSync } from 'node:fs';
import { Agent, request } from 'node:http';
import { join } from 'node:path';
import { QueryTypes, type Sequelize } from 'sequelize';
import { loadConfig } from '../core/config';
import { createRedis, closeRedis } from '../db/redis';
import { createSequelize } from '../db/sequelize';
import { createTestWorkspace } from '../test/helpers/workspaces';
import { freePort } from '../test/helpers/free-port';
import { startSmtpSink } from '../test/helpers/smtp-sink';
import { startApiProcess } from './api-process';
import { connectionsOf, metricsOf, type ProcessSample, slopePerHour } from './process-sampler';
import { residentBytes, startWorkerProcess } from './worker-process';

/**
 * `npm run bench -- soak`: a steady send load for SOAK_MINUTES (30) against the API and the worker, each in
 * its own process as `npm start` runs them, with an SMTP sink as the provider. Every SOAK_SAMPLE_SECONDS
 * (15) it samples, per process, heap, resident memory, event-loop lag (p99), active handles, open file
 * descriptors and TCP connections by the service they reach (PostgreSQL, Redis, Temporal), and, for the
 * whole run, PostgreSQL backends of the database (pg_stat_activity) and Redis clients (CLIENT LIST); for the
 * worker also `external`, ArrayBuffers, the heap of its workflow threads and its cached workflows
 * (workers/memory-diagnostics.ts), since resident memory growing beside a flat main heap is otherwise
 * unexplained. It prints each series' first value after SOAK_WARMUP_MINUTES (2) of the same load (the
 * baseline), its value halfway, its last, and its least-squares slope per hour over the measured minutes and
 * over their second half: a leak shows as a slope that does not flatten when the run is longer, memory that
 * levels off as a second-half slope near 0.
 *
 * The load is SOAK_RATE (10) POST /emails per second: a third of the transactional delivery this machine
 * measured end to end (29.7 sends/s, docs/benchmarks.md: one workflow per message bounds it, not the
 * API's 2,081 accepted/s), so the worker keeps up and nothing accumulates but what leaks.
 */
const MINUTES = Number(process.env.SOAK_MINUTES ?? 30);
/** Load before the measured minutes: the worker's workflow cache, the pools and the JIT fill first, and would read as growth. */
const WARMUP_MINUTES = Number(process.env.SOAK_WARMUP_MINUTES ?? 2);
const RATE = Number(process.env.SOAK_RATE ?? 10);
const SAMPLE_SECONDS = Number(process.env.SOAK_SAMPLE_SECONDS ?? 15);
/**
 * Measured minutes at which the worker writes V8 heap snapshots of its main and workflow threads (SIGUSR2,
 * workers/memory-diagnostics.ts) under .data/soak-heap/<run>/, e.g. `5,20,40,70`; none by default. Compare
 * two with `tsx bench/heap-diff.ts a.heapsnapshot b.heapsnapshot`. A snapshot pauses the worker for seconds.
 */
const SNAPSHOT_MINUTES = (process.env.SOAK_SNAPSHOT_MINUTES ?? '').split(',').filter(Boolean).map(Number);

interface Sample {
  at: number;
  values: Record<string, number>;
}

function portOf(url: string, fallback: number): number {
  const port = Number(new URL(url.includes('://') ? url : `tcp://${url}`).port);
  return port || fallback;
}

/** Sends RATE requests per second on keep-alive connections, on a fixed schedule that does not drift. */
function steadyLoad(url: string, key: string, body: (index: number) => unknown) {
  const agent = new Agent({ keepAlive: true, maxSockets: 16 });
  const target = new URL('/api/v1/emails', url);
  const statuses: Record<number, number> = {};
  let sent = 0;
  let inFlight = 0;
  const started = performance.now();
  const post = (index: number) => {
    const payload = JSON.stringify(body(index));
    inFlight += 1;
    const req = request(
      { host: target.hostname, port: target.port, path: target.pathname, method: 'POST', agent, headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json', 'content-length': Buffer.byteLength(payload) } },
      (res) => {
        res.resume();
        res.on('end', () => {
          inFlight -= 1;
          statuses[res.statusCode ?? 0] = (statuses[res.statusCode ?? 0] ?? 0) + 1;
        });
      },
    );
    req.on('error', () => {
      inFlight -= 1;
      statuses[0] = (statuses[0] ?? 0) + 1;
    });
    req.end(payload);
  };
  const timer = setInterval(() => {
    // As many as are due by now: a late tick catches up rather than lowering the rate.
    const due = Math.floor(((performance.now() - started) / 1000) * RATE);
    while (sent < due) post(sent++);
  }, 50);
  return {
    statuses,
    sent: () => sent,
    inFlight: () => inFlight,
    stop: () => {
      clearInterval(timer);
      agent.destroy();
    },
  };
}

/** Waits until the worker's snapshots (main thread and two workflow threads) are in `dir` and no longer growing. */
async function snapshotsWritten(dir: string): Promise<void> {
  const sizes = () => readdirSync(dir).map((file) => statSync(join(dir, file)).size);
  const before = readdirSync(dir).length;
  let last = '';
  for (const deadline = Date.now() + 180_000; Date.now() < deadline; await new Promise((resolve) => setTimeout(resolve, 5_000))) {
    const now = sizes();
    if (now.length >= before + 3 && now.every((size) => size > 0) && now.join() === last) return;
    last = now.join();
  }
}

async function databaseBackends(db: Sequelize): Promise<number> {
  const [{ count }] = await db.query<{ count: string }>('SELECT count(*) AS count FROM pg_stat_activity WHERE datname = current_database()', { type: QueryTypes.SELECT });
  return Number(count);
}

async function main(): Promise<void> {
  const config = loadConfig(process.env);
  const db = createSequelize(config.DATABASE_URL);
  const redis = createRedis(config.REDIS_URL);
  const sink = await startSmtpSink();
  const prefix = `soak-${randomUUID()}-`;
  const env = { TASK_QUEUE_PREFIX: prefix, EMAIL_PROVIDER: 'smtp', SMTP_URL: sink.url, SEND_RATE_PER_SECOND: '200', RATE_LIMIT_PER_SECOND: '1000', LOG_LEVEL: 'silent' };
  const api = await startApiProcess(env);
  const workerMetricsPort = await freePort();
  const snapshotDir = join('.data', 'soak-heap', new Date().toISOString().replace(/[:.]/g, '-'));
  const worker = await startWorkerProcess({
    ...env,
    LOG_LEVEL: 'warn',
    WORKER_METRICS_PORT: String(workerMetricsPort),
    ...(SNAPSHOT_MINUTES.length ? { WORKER_HEAP_SNAPSHOT_DIR: snapshotDir } : {}),
  });
  const processes = { api: { pid: api.pid, metrics: `${api.url}/metrics` }, worker: { pid: worker.pid, metrics: `http://127.0.0.1:${workerMetricsPort}/metrics` } };
  const ports = {
    postgres: portOf(config.DATABASE_URL, 5432),
    redis: portOf(config.REDIS_URL, 6379),
    temporal: portOf(config.TEMPORAL_ADDRESS, 7233),
  };

  const { apiKey, workspaceId, domain } = await createTestWorkspace(db, { plan: 'pro', name: 'Soak', domain: { masterKey: config.MASTER_KEY } });
  const run = randomUUID();
  // Until the worker serves its metrics it is still bundling the workflows: the load starts after.
  for (const deadline = Date.now() + 120_000; ; await new Promise((resolve) => setTimeout(resolve, 500))) {
    const ready = await fetch(processes.worker.metrics).then((res) => res.ok, () => false);
    if (ready) break;
    if (Date.now() > deadline) throw new Error('the worker did not serve its metrics within 120 s');
  }

  console.log(
    `\nSoak: ${RATE} POST /emails per second, ${WARMUP_MINUTES} min of warm-up then ${MINUTES} min measured, sampled every ${SAMPLE_SECONDS} s (API pid ${api.pid}, worker pid ${worker.pid})`,
  );
  let delivered = 0;
  const load = steadyLoad(api.url, apiKey, (i) => ({ from: `soak@${domain}`, to: `r${i}@example.org`, subject: 'Soak', html: '<p>Hello {{name}}</p>', text: 'Hello', idempotencyKey: `${run}-${i}` }));
  const loadStarted = Date.now();
  const samples: Sample[] = [];
  let began = loadStarted;
  const sampleOnce = async () => {
    delivered += sink.received.length;
    // The sink keeps every message it receives; counted and dropped, so the benchmark's own heap stays flat.
    sink.received.length = 0;
    const values: Record<string, number> = {};
    for (const [name, target] of Object.entries(processes)) {
      const metrics: ProcessSample = await metricsOf(target.metrics).catch(() => ({}));
      for (const [label, value] of Object.entries({ ...metrics, ...Object.fromEntries(Object.entries(connectionsOf(target.pid, ports)).map(([k, v]) => [`conn.${k}`, v])) })) {
        values[`${name}.${label}`] = value;
      }
    }
    values['pg_stat_activity'] = await databaseBackends(db);
    values['redis.clients'] = String(await redis.client('LIST')).trim().split('\n').length;
    values['backlog'] = load.sent() - delivered;
    samples.push({ at: (Date.now() - began) / 3_600_000, values });
  };
  await new Promise((resolve) => setTimeout(resolve, WARMUP_MINUTES * 60_000));
  began = Date.now();
  await sampleOnce();
  console.log(`  warm-up over: sent ${load.sent()}, delivered ${delivered}`);
  const snapshotsDue = [...SNAPSHOT_MINUTES].sort((a, b) => a - b);
  for (let minute = 0; Date.now() - began < MINUTES * 60_000; ) {
    await new Promise((resolve) => setTimeout(resolve, SAMPLE_SECONDS * 1000));
    await sampleOnce();
    if (residentBytes(worker.pid) === 0) throw new Error(`the worker (pid ${worker.pid}) exited during the soak`);
    const elapsed = Math.floor((Date.now() - began) / 60_000);
    if (elapsed > minute) {
      minute = elapsed;
      // A sample the process did not answer (a heap snapshot pauses it for seconds) prints as n/a.
      const last = (name: string) => samples[samples.length - 1].values[name]?.toFixed(1) ?? 'n/a';
      console.log(
        `  ${String(minute).padStart(3)} min: sent ${load.sent()}, delivered ${delivered}, API heap ${last('api.heapUsedMB')} MB, ` +
          `worker rss ${last('worker.rssMB')} MB, heap ${last('worker.heapUsedMB')} MB, workflow threads ${last('worker.workflowHeapMB')} MB, ` +
          `external ${last('worker.externalMB')} MB, cached workflows ${last('worker.cachedWorkflows')}`,
      );
    }
    if (snapshotsDue.length && elapsed >= snapshotsDue[0] && snapshotsDue[0] < MINUTES) {
      snapshotsDue.shift();
      process.kill(worker.pid, 'SIGUSR2');
      console.log(`  ${String(elapsed).padStart(3)} min: heap snapshots of the worker asked for, under ${snapshotDir}`);
    }
  }
  if (snapshotsDue.length) {
    // Snapshots asked for at the end are taken after the last sample (one costs the worker hundreds of MB of
    // resident memory that glibc keeps: taken mid-run it would read as growth), before the worker stops.
    process.kill(worker.pid, 'SIGUSR2');
    console.log(`  heap snapshots of the worker asked for after the last sample, under ${snapshotDir}`);
    await snapshotsWritten(snapshotDir);
  }
  load.stop();

  const hours = samples.map((sample) => sample.at);
  // "Levels off" means the second half's slope is near zero, whatever the first half (caches filling) did.
  const half = samples.filter((sample) => sample.at >= samples[samples.length - 1].at / 2);
  console.log(`\n  ${'series'.padEnd(30)} ${'start'.padStart(10)} ${'mid'.padStart(10)} ${'end'.padStart(10)} ${'slope/h'.padStart(10)} ${'2nd half/h'.padStart(10)}`);
  for (const series of Object.keys(samples[0].values)) {
    const values = samples.map((sample) => sample.values[series]);
    if (!values.some(Number.isFinite)) continue;
    const fmt = (value: number) => (Number.isFinite(value) ? value.toFixed(Math.abs(value) < 10 ? 2 : 1) : 'n/a').padStart(10);
    const lastHalf = slopePerHour(half.map((sample) => sample.at), half.map((sample) => sample.values[series]));
    console.log(`  ${series.padEnd(30)} ${fmt(values[0])} ${fmt(half[0].values[series])} ${fmt(values[values.length - 1])} ${fmt(slopePerHour(hours, values))} ${fmt(lastHalf)}`);
  }
  const seconds = (Date.now() - loadStarted) / 1000;
  console.log(
    `\n  sent ${load.sent()} in ${(seconds / 60).toFixed(1)} min (${(load.sent() / seconds).toFixed(1)}/s), answered ${JSON.stringify(load.statuses)}, ` +
      `delivered ${delivered}; ${samples.length} samples over the ${((Date.now() - began) / 60_000).toFixed(1)} measured min`,
  );

  await Promise.allSettled([worker.stop(), api.stop()]);
  await sink.close();
  await closeRedis(redis);
  // The soak's messages measured nothing once printed; the next benchmark starts without them.
  await db.query('DELETE FROM workspaces WHERE id = $1', { bind: [workspaceId] });
  await db.close();
}

main().then(
  () => process.exit(0),
  (err: unknown) => {
    console.error(err);
    process.exit(1);
  },
);
