import { Agent, request } from 'node:http';
import { QueryTypes } from 'sequelize';
import { loadConfig } from '../core/config';
import { createSequelize } from '../db/sequelize';
import { createTestWorkspace } from '../test/helpers/workspaces';
import { createTrackedMessage } from '../test/helpers/tracked-message';
import { startApiProcess } from './api-process';
import { readCpu } from './cpu-meter';
import { ms, summary } from './stats';

/**
 * `npm run bench -- tracking`: requests per second and latency of the open pixel and the click redirect,
 * beside a bare route of the same server (`/healthz`: no database, no Redis) in the same run. The API runs
 * in its own process, as in production; rounds alternate between the three so each sees the same machine.
 * The redirect reads its message's links once per process (then from memory), and neither endpoint waits
 * on a database write: hits are stored in batches. At the end the API is stopped with SIGTERM and every
 * hit sent must be in the database.
 */
const REQUESTS = Number(process.env.BENCH_REQUESTS ?? 5_000);
const CONCURRENCY = Number(process.env.BENCH_CONCURRENCY ?? 32);
/** Latency is measured apart, with few connections: at saturation every request mostly waits its turn. */
const LATENCY_CONCURRENCY = Number(process.env.BENCH_LATENCY_CONCURRENCY ?? 4);
/** Many short rounds, each comparing with the bare route of the same round: a busy neighbour on the machine moves both. */
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 10);
const MESSAGES = 200;

interface Run {
  perSecond: number;
  latencies: number[];
  statuses: Record<number, number>;
}

async function run(url: string, paths: string[], count: number, concurrency = CONCURRENCY): Promise<Run> {
  const target = new URL(url);
  const agent = new Agent({ keepAlive: true, maxSockets: concurrency });
  const latencies: number[] = [];
  const statuses: Record<number, number> = {};
  let next = 0;
  const one = (path: string) =>
    new Promise<void>((resolve, reject) => {
      const started = process.hrtime.bigint();
      const req = request({ host: target.hostname, port: target.port, path, agent, headers: { 'user-agent': 'Mozilla/5.0 (iPhone; CPU iPhone OS 17_4 like Mac OS X) Safari/604.1' } }, (res) => {
        res.resume();
        res.on('end', () => {
          latencies.push(Number(process.hrtime.bigint() - started) / 1e6);
          statuses[res.statusCode ?? 0] = (statuses[res.statusCode ?? 0] ?? 0) + 1;
          resolve();
        });
      });
      req.on('error', reject);
      req.end();
    });
  const began = process.hrtime.bigint();
  await Promise.all(
    Array.from({ length: concurrency }, async () => {
      for (let index = next++; index < count; index = next++) await one(paths[index % paths.length]);
    }),
  );
  const seconds = Number(process.hrtime.bigint() - began) / 1e9;
  agent.destroy();
  return { perSecond: count / seconds, latencies, statuses };
}

const median = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)];

async function main(): Promise<void> {
  const config = loadConfig(process.env);
  const db = createSequelize(config.DATABASE_URL);
  const { workspaceId } = await createTestWorkspace(db, { plan: 'pro', name: 'Tracking benchmark' });
  const messages = [];
  for (let i = 0; i < MESSAGES; i += 1) messages.push(await createTrackedMessage(db, config, workspaceId, { sentAgoMs: 3_600_000 }));
  // Every request comes from one address with one user agent: without these the per-address limit and the
  // replay window (docs/tracking.md) would store almost none of them, and the stored count would mean nothing.
  const api = await startApiProcess({ LOG_LEVEL: 'silent', TRACKING_PER_IP_PER_MINUTE: '100000000', TRACKING_REPLAY_WINDOW_MS: '0' });

  const targets = {
    bare: ['/healthz'],
    pixel: messages.map((message) => message.pixelPath),
    redirect: messages.flatMap((message) => ['l1', 'review-cta', 'l4'].map((linkId) => message.clickPath(linkId))),
  };
  const results: Record<keyof typeof targets, Run[]> = { bare: [], pixel: [], redirect: [] };
  const paced: Record<keyof typeof targets, Run[]> = { bare: [], pixel: [], redirect: [] };
  // The API's own CPU per request (from /proc): what a rate on a shared machine only estimates. A hit's
  // batched write lands within a second, mostly inside its own endpoint's run.
  const cpuSeconds: Record<keyof typeof targets, number> = { bare: 0, pixel: 0, redirect: 0 };
  const apiCpu = () => readCpu({ api: api.pid }).groups.api;
  // Warm up: JIT, connections, and each message's links read once into the redirect's cache.
  for (const paths of Object.values(targets)) await run(api.url, paths, Math.max(2_000, paths.length));
  let sent = Math.max(2_000, targets.pixel.length) + Math.max(2_000, targets.redirect.length);
  for (let round = 0; round < ROUNDS; round += 1) {
    const order = (['bare', 'pixel', 'redirect'] as const).map((_name, i, all) => all[(i + round) % all.length]);
    for (const name of order) {
      const before = apiCpu();
      results[name].push(await run(api.url, targets[name], REQUESTS));
      cpuSeconds[name] += apiCpu() - before;
      paced[name].push(await run(api.url, targets[name], REQUESTS / 4, LATENCY_CONCURRENCY));
      if (name !== 'bare') sent += REQUESTS + REQUESTS / 4;
    }
  }
  await api.stop();

  const statusesOf = (runs: Run[]) =>
    runs.reduce<Record<number, number>>((all, result) => {
      for (const [status, count] of Object.entries(result.statuses)) all[Number(status)] = (all[Number(status)] ?? 0) + count;
      return all;
    }, {});
  console.log(`\nTracking endpoints, ${ROUNDS} rounds; throughput: ${REQUESTS} requests over ${CONCURRENCY} keep-alive connections (median round,`);
  console.log(`share of bare: median of the rounds' own ratios, with their range);`);
  console.log(`latency: ${REQUESTS / 4} requests over ${LATENCY_CONCURRENCY} connections (all rounds)`);
  for (const name of ['bare', 'pixel', 'redirect'] as const) {
    const perSecond = median(results[name].map((result) => result.perSecond));
    const latency = summary(paced[name].flatMap((result) => result.latencies));
    const saturated = summary(results[name].flatMap((result) => result.latencies));
    const ratios = results[name].map((result, round) => (result.perSecond / results.bare[round].perSecond) * 100);
    const share = name === 'bare' ? '' : `  ${median(ratios).toFixed(0)}% of bare (${Math.min(...ratios).toFixed(0)}-${Math.max(...ratios).toFixed(0)})`;
    console.log(
      `  ${name.padEnd(9)} ${perSecond.toFixed(0).padStart(6)} requests/s${share.padEnd(26)}  p50 ${ms(latency.p50)}  p99 ${ms(latency.p99)}` +
        `   (at ${CONCURRENCY} connections p99 ${ms(saturated.p99)})   ${JSON.stringify(statusesOf([...results[name], ...paced[name]]))}`,
    );
  }
  const perRequest = (name: keyof typeof targets) => (cpuSeconds[name] / (REQUESTS * ROUNDS)) * 1e6;
  console.log(
    `  API CPU per request (throughput runs): ${(['bare', 'pixel', 'redirect'] as const)
      .map((name) => `${name} ${perRequest(name).toFixed(0)} µs${name === 'bare' ? '' : ` (bare's is ${((perRequest('bare') / perRequest(name)) * 100).toFixed(0)}% of it)`}`)
      .join(', ')}`,
  );
  console.log('  targets: pixel and redirect >= 80% of bare, p99 < 20 ms');
  const [stored] = await db.query<{ events: string }>(
    `SELECT count(*) AS events FROM message_events WHERE workspace_id = $1 AND type IN ('open', 'click')`,
    { bind: [workspaceId], type: QueryTypes.SELECT },
  );
  console.log(`  hits stored after SIGTERM: ${stored.events} of ${sent} sent${Number(stored.events) === sent ? ' (none lost)' : ' (LOST SOME)'}`);
  await db.close();
}

main().catch((err: unknown) => {
  console.error(err);
  process.exit(1);
});
