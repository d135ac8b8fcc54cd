import { Agent, request } from 'node:http';
import { startApi } from '../test/helpers/api-harness';
import { createTestWorkspace } from '../test/helpers/workspaces';
import { ms, summary } from './stats';

/**
 * Added latency of authentication + rate limit per request. One server mounts the same trivial handler
 * twice: bare, and behind the edge (auth, Redis rate limit). Requests alternate between the two over
 * one keep-alive connection, so both see the same machine state; the difference of medians is the
 * figure. Run with `npm run bench -- auth`.
 */
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 5_000);
const WARMUP = 500;

function get(agent: Agent, port: number, path: string, key?: string): Promise<number> {
  return new Promise((resolve, reject) => {
    const started = process.hrtime.bigint();
    const req = request({ host: '127.0.0.1', port, path, agent, headers: key ? { authorization: `Bearer ${key}` } : {} }, (res) => {
      res.resume();
      res.on('end', () => {
        if (res.statusCode !== 200) reject(new Error(`${path} answered ${res.statusCode}`));
        else resolve(Number(process.hrtime.bigint() - started) / 1e6);
      });
    });
    req.on('error', reject);
    req.end();
  });
}

async function measure(label: string, cacheTtlMs: string): Promise<{ bare: number[]; keyed: number[] }> {
  const api = await startApi(
    { RATE_LIMIT_PER_SECOND: '100000000', API_KEY_CACHE_TTL_MS: cacheTtlMs, LOG_LEVEL: 'silent' },
    {
      extend: (router, edge) => {
        router.get('/bench/bare', (_req, res) => void res.json({ ok: true }));
        router.get('/bench/keyed', ...edge, (_req, res) => void res.json({ ok: true }));
      },
    },
  );
  const { apiKey } = await createTestWorkspace(api);
  const port = Number(new URL(api.url).port);
  const agent = new Agent({ keepAlive: true, maxSockets: 1 });
  const bare: number[] = [];
  const keyed: number[] = [];
  for (let i = 0; i < WARMUP + ROUNDS; i += 1) {
    const b = await get(agent, port, '/api/v1/bench/bare');
    const k = await get(agent, port, '/api/v1/bench/keyed', apiKey);
    if (i >= WARMUP) {
      bare.push(b);
      keyed.push(k);
    }
  }
  agent.destroy();
  await api.close();
  const b = summary(bare);
  const k = summary(keyed);
  console.log(`\n${label} (${ROUNDS} requests each, sequential, keep-alive)`);
  console.log(`  bare route         p50 ${ms(b.p50)}  p95 ${ms(b.p95)}  p99 ${ms(b.p99)}`);
  console.log(`  auth + rate limit  p50 ${ms(k.p50)}  p95 ${ms(k.p95)}  p99 ${ms(k.p99)}`);
  console.log(`  added at p50: ${ms(k.p50 - b.p50)}   at p95: ${ms(k.p95 - b.p95)}   (target: < 1 ms at p50)`);
  return { bare, keyed };
}

async function main(): Promise<void> {
  await measure('Key cache on (default TTL 5 s): auth from memory, rate limit in Redis', '5000');
  await measure('Key cache off: every request also reads the key from Postgres', '0');
}

main().catch((err: unknown) => {
  console.error(err);
  process.exit(1);
});
