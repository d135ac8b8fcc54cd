import { randomBytes } from 'node:crypto';
import { QueryTypes } from 'sequelize';
import { generateApiKey } from '../core/api-keys';
import { type ApiHarness, startApi } from '../test/helpers/api-harness';
import { createTestWorkspace } from '../test/helpers/workspaces';
import { createTrackedMessage } from '../test/helpers/tracked-message';

/**
 * What a flood of the public edge costs (docs/security.md, "The public edge"): database statements sent for
 * 1,000 forged unsubscribe links and 1,000 random API keys from one address, events stored for 1,000 replays
 * of one pixel, and the pixel's latency. Run twice: with the settings that restore the behaviour before
 * issue 29 (version 1 links accepted, no replay window, no unknown-key limit) as the baseline, and with the
 * defaults. Run with `npm run bench -- public-edge`.
 */
const REQUESTS = Number(process.env.BENCH_ROUNDS ?? 1_000);

const address = () => `198.19.${Math.floor(Math.random() * 256)}.${1 + Math.floor(Math.random() * 254)}`;

async function measure(api: ApiHarness) {
  let statements = 0;
  api.db.addHook('afterQuery', 'bench-count', () => {
    statements += 1;
  });
  const during = async (work: () => Promise<void>) => {
    statements = 0;
    await work();
    return statements;
  };
  const get = (path: string, from: string, headers: Record<string, string> = {}) =>
    fetch(`${api.url}${path}`, { redirect: 'manual', headers: { 'x-forwarded-for': from, 'user-agent': 'Mozilla/5.0 bench', ...headers } }).then((response) => response.arrayBuffer());

  const forgedLinks = await during(async () => {
    for (let i = 0; i < REQUESTS; i += 1) await get(`/unsubscribe/${Buffer.concat([Buffer.from([1]), randomBytes(64)]).toString('base64url')}`, address());
  });
  const one = address();
  const randomKeys = await during(async () => {
    for (let i = 0; i < REQUESTS; i += 1) await get('/api/v1/usage', one, { authorization: `Bearer ${generateApiKey().key}` });
  });
  const { workspaceId } = await createTestWorkspace(api);
  const message = await createTrackedMessage(api.db, api.config, workspaceId, { sentAgoMs: 3_600_000 });
  const replaying = address();
  const latencies: number[] = [];
  for (let i = 0; i < REQUESTS; i += 1) {
    const started = performance.now();
    await get(message.pixelPath, replaying);
    latencies.push(performance.now() - started);
  }
  // Twice: a flush already under way (the timer's) only writes what was due when it began.
  await api.tracking.buffer.flush(true);
  await api.tracking.buffer.flush(true);
  const [{ stored }] = await api.db.query<{ stored: string }>("SELECT count(*) AS stored FROM message_events WHERE message_id = $1 AND type = 'open'", {
    bind: [message.messageId],
    type: QueryTypes.SELECT,
  });
  api.db.removeHook('afterQuery', 'bench-count');
  latencies.sort((a, b) => a - b);
  const at = (q: number) => latencies[Math.floor(latencies.length * q)].toFixed(2);
  return { forgedLinks, randomKeys, replaysStored: Number(stored), pixelMs: `p50 ${at(0.5)} ms, p90 ${at(0.9)} ms` };
}

async function main(): Promise<void> {
  const common = { TRUST_PROXY: 'loopback', RATE_LIMIT_PER_SECOND: '100000000', UNSUBSCRIBE_PER_IP_PER_MINUTE: '100000000', TRACKING_PER_IP_PER_MINUTE: '100000000' };
  const runs = [
    ['as before issue 29', { ...common, UNSUBSCRIBE_V1_LINKS: 'true', TRACKING_REPLAY_WINDOW_MS: '0', UNKNOWN_KEYS_PER_IP_PER_MINUTE: '100000000' }],
    ['defaults', { ...common, UNKNOWN_KEYS_PER_IP_PER_MINUTE: '30' }],
  ] as const;
  const rows = [];
  for (const [label, overrides] of runs) {
    const api = await startApi(overrides);
    try {
      rows.push({ run: label, ...(await measure(api)) });
    } finally {
      await api.close();
    }
  }
  console.log(`${REQUESTS} requests each: forged unsubscribe links and random keys (statements sent), pixel replays (events stored)`);
  console.table(rows);
}

main().then(
  () => process.exit(0),
  (err: unknown) => {
    console.error(err);
    process.exit(1);
  },
);
