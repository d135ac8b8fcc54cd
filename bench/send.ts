import { randomUUID } from 'node:crypto';
import { connectTemporal } from '../temporal/connection';
import { QueryTypes, type Sequelize } from 'sequelize';
import { sendMessageWorkflow } from '../workflows/send-message';
import { loadConfig } from '../core/config';
import { createSequelize } from '../db/sequelize';
import { startEmailStack } from '../test/helpers/email-stack';
import { createTestWorkspace } from '../test/helpers/workspaces';
import { startApiProcess } from './api-process';
import '../test/helpers/quiet-temporal-runtime';
import { load } from './load';
import { sentTimes } from './sent-times';
import { ms } from './stats';

/**
 * `npm run bench -- send`: accepted sends per second and latency of POST /emails (inline start and
 * outbox-only), emails per second through POST /emails/batch, bare workflow starts on the same Temporal
 * server in the same run, and the outbound rate achieved against the configured provider rate.
 */
const SINGLES = Number(process.env.BENCH_SINGLES ?? 10_000);
const BATCHES = Number(process.env.BENCH_BATCHES ?? 300);
const CONCURRENCY = Number(process.env.BENCH_CONCURRENCY ?? 32);
const BATCH_CONCURRENCY = Number(process.env.BENCH_BATCH_CONCURRENCY ?? 4);
const PROVIDER_RATE = Number(process.env.BENCH_PROVIDER_RATE ?? 14);
const OUTBOUND = Number(process.env.BENCH_OUTBOUND ?? PROVIDER_RATE * 30);

const line = (label: string, result: { perSecond: number; latency: { p50: number; p99: number }; statuses: object }, unit = 'requests/s') =>
  console.log(`  ${label.padEnd(34)} ${result.perSecond.toFixed(0).padStart(6)} ${unit}   p50 ${ms(result.latency.p50)}   p99 ${ms(result.latency.p99)}   ${JSON.stringify(result.statuses)}`);

const HISTORY = 200_000;

/**
 * A live service's messages table is never empty. Against an empty one the planner's statistics say
 * "no rows" and it picks plans that fall apart as the run fills the table, so the benchmark keeps a
 * history of sent messages in a workspace of its own (seeded once) and starts each run freshly vacuumed.
 */
async function ensureHistory(db: Sequelize): Promise<void> {
  const [{ count }] = await db.query<{ count: string }>('SELECT count(*) AS count FROM messages', { type: QueryTypes.SELECT });
  if (Number(count) < HISTORY) {
    const { workspaceId } = await createTestWorkspace(db, { plan: 'pro', name: 'Benchmark history' });
    await db.query(
      `INSERT INTO messages (id, workspace_id, kind, channel, status, idempotency_key, request_hash, from_address, to_addresses,
         subject, content, quota_units, quota_period, created_at, dispatched_at)
       SELECT gen_random_uuid(), $1, 'transactional', 'email', 'sent', 'history-' || i, md5(i::text), 'a@history.example.com',
         ARRAY['r' || i || '@example.org'], 'History', '{}', 1, date_trunc('month', now())::date, now() - make_interval(secs => i), now()
       FROM generate_series(1, $2::int) AS i`,
      { bind: [workspaceId, HISTORY - Number(count)] },
    );
    await db.query(
      `INSERT INTO message_keys (workspace_id, idempotency_key, message_id, request_hash)
       SELECT workspace_id, idempotency_key, id, request_hash FROM messages WHERE workspace_id = $1`,
      { bind: [workspaceId] },
    );
  }
  await db.query('VACUUM ANALYZE messages');
  await db.query('VACUUM ANALYZE message_keys');
}

async function acceptance(): Promise<void> {
  const config = loadConfig(process.env);
  const db = createSequelize(config.DATABASE_URL);
  await ensureHistory(db);
  // Acceptance only: no worker runs, so sending does not compete for the two cores.
  const api = await startApiProcess({ RATE_LIMIT_PER_SECOND: '1000000', LOG_LEVEL: 'silent' });
  const { apiKey, workspaceId, domain } = await createTestWorkspace(db, { plan: 'pro', domain: { masterKey: config.MASTER_KEY } });
  const email = (key: string) => ({ from: `a@${domain}`, to: 'someone@example.org', subject: 'Hello', html: '<p>Hi</p>', idempotencyKey: key });
  const run = randomUUID();
  await load({ url: api.url, path: '/api/v1/emails', key: apiKey, count: 300, concurrency: CONCURRENCY, body: (i) => email(`${run}-warm-${i}`) });
  const single = await load({ url: api.url, path: '/api/v1/emails', key: apiKey, count: SINGLES, concurrency: CONCURRENCY, body: (i) => email(`${run}-s-${i}`) });
  line('POST /emails', single);
  const batch = await load({
    url: api.url,
    path: '/api/v1/emails/batch',
    key: apiKey,
    count: BATCHES,
    concurrency: BATCH_CONCURRENCY,
    body: (i) => ({ emails: Array.from({ length: 100 }, (_, j) => email(`${run}-b-${i}-${j}`)) }),
  });
  line('POST /emails/batch, 100 each', { ...batch, perSecond: batch.perSecond * 100 }, 'emails/s  ');
  await api.stop();
  // These messages only measured acceptance: the workspace goes with them, and the vacuum now spares the
  // next run an autovacuum of the messages table in the middle of its measurement.
  await db.query('DELETE FROM workspaces WHERE id = $1', { bind: [workspaceId] });
  await db.query('VACUUM ANALYZE messages');
  await db.query('VACUUM ANALYZE message_keys');
  await db.close();
}

async function bareStarts(address: string): Promise<void> {
  const client = await connectTemporal({ TEMPORAL_ADDRESS: address, TEMPORAL_NAMESPACE: 'default' });
  const taskQueue = `bench-${randomUUID()}`;
  const count = 1_000;
  let next = 0;
  const started = process.hrtime.bigint();
  await Promise.all(
    Array.from({ length: CONCURRENCY }, async () => {
      for (let i = next++; i < count; i = next++) {
        await client.workflow.start(sendMessageWorkflow, {
          taskQueue,
          workflowId: `bench-start-${randomUUID()}`,
          args: [{ workspaceId: randomUUID(), messageId: randomUUID(), sendsTaskQueue: taskQueue }],
        });
      }
    }),
  );
  const seconds = Number(process.hrtime.bigint() - started) / 1e9;
  console.log(`  ${'bare workflow starts (same server)'.padEnd(34)} ${(count / seconds).toFixed(0).padStart(6)} starts/s   (${count} starts, ${CONCURRENCY} at a time)`);
  await client.connection.close();
}

async function outbound(): Promise<void> {
  const stack = await startEmailStack({
    overrides: { RATE_LIMIT_PER_SECOND: '1000000', SEND_RATE_PER_SECOND: String(PROVIDER_RATE), LOG_LEVEL: 'silent' },
  });
  const { apiKey, workspaceId, domain } = await createTestWorkspace(stack.api, { plan: 'pro', domain: true });
  // Accept everything first with no worker running, then let the workers (at the configured provider rate)
  // drain it: the span between the first and the last provider send is the steady-state rate.
  await stack.stopWorkers();
  await stack.stopDispatcher();
  const run = randomUUID();
  for (let i = 0; i < OUTBOUND; i += 100) {
    const emails = Array.from({ length: Math.min(100, OUTBOUND - i) }, (_, j) => ({
      from: `a@${domain}`, to: `r${i + j}@example.org`, subject: 'Rate', text: 'T', idempotencyKey: `${run}-${i + j}`,
    }));
    await stack.api.call('POST', '/api/v1/emails/batch', { key: apiKey, body: { emails } });
  }
  await stack.startWorkers();
  stack.startDispatcher();
  const sentAt = await sentTimes(stack.api.db, workspaceId, OUTBOUND);
  // Overall: first to last provider send. Steady: the middle 80%, leaving out the first seconds (when the
  // workers are still starting and rendering the backlog) and the tail.
  const rateBetween = (from: number, to: number) => (to - from) / (sentAt[to] - sentAt[from]);
  const report = (label: string, from: number, to: number) => {
    const rate = rateBetween(from, to);
    console.log(`  ${label.padEnd(34)} ${rate.toFixed(2).padStart(6)} sends/s   configured ${PROVIDER_RATE}/s: ${((rate / PROVIDER_RATE) * 100).toFixed(1)}% (${to - from + 1} sends over ${(sentAt[to] - sentAt[from]).toFixed(1)} s)`);
  };
  report('outbound, first to last send', 0, sentAt.length - 1);
  report('outbound, steady (middle 80%)', Math.floor(sentAt.length * 0.1), Math.floor(sentAt.length * 0.9));
  await stack.close();
}

/** BENCH_PHASES=acceptance,outbound runs a subset (default: all). */
const PHASES = new Set((process.env.BENCH_PHASES ?? 'acceptance,starts,outbound').split(','));

async function main(): Promise<void> {
  if (PHASES.has('acceptance')) {
    console.log(`\nAcceptance (${SINGLES} single sends, ${CONCURRENCY} concurrent; ${BATCHES} batches of 100, ${BATCH_CONCURRENCY} concurrent; the API in its own process)`);
    await acceptance();
  }
  if (PHASES.has('starts')) await bareStarts(process.env.TEMPORAL_ADDRESS ?? '127.0.0.1:7244');
  if (PHASES.has('outbound')) {
    console.log('\nDelivery');
    await outbound();
  }
}

main().then(
  () => process.exit(0),
  (err: unknown) => {
    console.error(err);
    process.exit(1);
  },
);
