import { randomUUID } from 'node:crypto';
import { readdirSync } from 'node:fs';
import type { Client } from '@temporalio/client';
import { QueryTypes } from 'sequelize';
import { type EmailStack, startEmailStack } from '../test/helpers/email-stack';
import { addTestDomain, createTestWorkspace } from '../test/helpers/workspaces';
import { commandLine, type CpuReading, readCpu } from './cpu-meter';
import { sentTimes } from './sent-times';
import { summary } from './stats';
import { workerInItsOwnProcess } from './worker-process';

/**
 * The transactional burst of issue 33, as a customer makes it: BENCH_BURST (10,000) emails through
 * `POST /emails/batch` (100 per call, 4 calls at a time) into a provider that accepts every mail at once and
 * is configured at `rate` a second; then light load on the same stack (one email every 200 ms). Everything
 * runs on this machine: the API and the SMTP sink in this process, the worker and its dispatcher in their own
 * (as `npm start` runs them), PostgreSQL, Redis and the Temporal server given by TEMPORAL_ADDRESS.
 */
const BURST = Number(process.env.BENCH_BURST ?? 10_000);
const LIGHT = Number(process.env.BENCH_LIGHT ?? 100);
const LIGHT_INTERVAL_MS = 200;
const PER_CALL = 100;
const CONCURRENT_CALLS = 4;

/**
 * The Temporal server this benchmark talks to, by its process id: a pattern would also count (and, when they
 * exit, subtract) other dev servers on the machine. A dev server is told apart by its port; the server on
 * PostgreSQL (scripts/temporal-postgres.sh) by its binary.
 */
function temporalServer(address: string): number | RegExp {
  const port = address.split(':')[1];
  for (const pid of readdirSync('/proc').filter((entry) => /^\d+$/.test(entry))) {
    const command = commandLine(pid);
    if (new RegExp(`temporal server start-dev .*--port ${port} `).test(command) || /tools\/bin\/temporal-server /.test(command)) return Number(pid);
  }
  return /temporal server start-dev|tools\/bin\/temporal-server /;
}

export const CPU_GROUPS = {
  worker: /workers\/main\.ts/,
  postgres: /^postgres|bin\/postgres/,
  temporal: temporalServer(process.env.TEMPORAL_ADDRESS ?? '127.0.0.1:7244'),
};

const pad = (label: string) => `  ${label.padEnd(46)}`;
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** How long after `since` the sink received a mail for `address` (Infinity past the timeout). */
export async function receivedWithin(stack: EmailStack, address: string, since: number, timeoutMs: number): Promise<number> {
  for (let seen = 0; performance.now() - since < timeoutMs; await sleep(5)) {
    for (; seen < stack.sink.received.length; seen += 1) if (stack.sink.received[seen].recipients.includes(address)) return performance.now() - since;
  }
  return Number.POSITIVE_INFINITY;
}

/** Where the time went between two readings: each group's CPU and the machine's iowait, in % of one core. */
function timeSpent(before: CpuReading, after: CpuReading, seconds: number): string {
  const share = (cpu: number) => `${((cpu / seconds) * 100).toFixed(0)}%`;
  const groups = Object.keys(after.groups).map((name) => `${name} ${share(after.groups[name] - before.groups[name])}`);
  return [`API+sink ${share(after.self - before.self)}`, ...groups, `iowait ${share(after.iowait - before.iowait)}`, `machine busy ${share(after.machine - before.machine)}`].join(', ');
}

/** How many sends fell in each 5 s from `since` (epoch seconds): the ramp, the steady part and the tail. */
function perFiveSeconds(times: number[], since: number): number[] {
  const buckets: number[] = [];
  for (const at of times) {
    const index = Math.max(0, Math.floor((at - since) / 5));
    while (buckets.length <= index) buckets.push(0);
    buckets[index] += 1;
  }
  return buckets;
}

async function sendBurst(stack: EmailStack, apiKey: string, from: string): Promise<{ acceptedMs: number; statuses: Record<string, number> }> {
  const statuses: Record<string, number> = {};
  let next = 0;
  const started = performance.now();
  await Promise.all(
    Array.from({ length: CONCURRENT_CALLS }, async () => {
      for (let call = next++; call * PER_CALL < BURST; call = next++) {
        const emails = Array.from({ length: Math.min(PER_CALL, BURST - call * PER_CALL) }, (_, i) => ({
          from,
          to: `burst-${call * PER_CALL + i}@example.org`,
          subject: 'Your receipt',
          text: 'Thank you for your order.',
          idempotencyKey: `burst-${randomUUID()}`,
        }));
        const response = await stack.api.call('POST', '/api/v1/emails/batch', { key: apiKey, body: { emails } });
        const results = (response.body as { results?: Array<{ status: string; error?: { code: string } }> }).results;
        for (const item of results ?? [{ status: `http ${response.status}` }]) {
          const key = item.error?.code ?? item.status;
          statuses[key] = (statuses[key] ?? 0) + 1;
        }
      }
    }),
  );
  return { acceptedMs: performance.now() - started, statuses };
}

async function lightLoad(stack: EmailStack, workspaceId: string, apiKey: string, from: string): Promise<void> {
  const latencies: Array<Promise<number>> = [];
  for (let i = 0; i < LIGHT; i += 1) {
    const to = `light-${i}-${randomUUID().slice(0, 8)}@example.org`;
    const sent = performance.now();
    const response = await stack.api.call('POST', '/api/v1/emails', { key: apiKey, body: { from, to, subject: 'Reset', text: 'Your code', idempotencyKey: `light-${randomUUID()}` } });
    if (response.status !== 202) throw new Error(`light load: POST /emails answered ${response.status}`);
    latencies.push(receivedWithin(stack, to, sent, 30_000));
    await sleep(Math.max(0, LIGHT_INTERVAL_MS - (performance.now() - sent)));
  }
  const measured = summary(await Promise.all(latencies));
  console.log(`${pad(`light load, POST /emails → sink (${LIGHT}, 5/s)`)} p50 ${measured.p50.toFixed(0)} ms   p99 ${measured.p99.toFixed(0)} ms   (target p50 ≤ 150 ms)`);
  // The two halves of that time, from the message's own row: accepted → its workflow started (the outbox wait
  // and the start), started → recorded sent (Temporal's tasks, the delivery activity, the SMTP exchange).
  const rows = await stack.api.db.query<{ dispatch: number; delivery: number }>(
    `SELECT EXTRACT(EPOCH FROM m.dispatched_at - m.created_at) * 1000 AS dispatch, EXTRACT(EPOCH FROM e.created_at - m.dispatched_at) * 1000 AS delivery
       FROM messages m JOIN message_events e ON e.message_id = m.id AND e.type = 'sent'
      WHERE m.workspace_id = $1 AND m.subject = 'Reset'`,
    { bind: [workspaceId], type: QueryTypes.SELECT },
  );
  const dispatch = summary(rows.map((row) => Number(row.dispatch)));
  const delivery = summary(rows.map((row) => Number(row.delivery)));
  console.log(`${pad('  accepted → workflow started')} p50 ${dispatch.p50.toFixed(0)} ms   p99 ${dispatch.p99.toFixed(0)} ms`);
  console.log(`${pad('  workflow started → recorded sent')} p50 ${delivery.p50.toFixed(0)} ms   p99 ${delivery.p99.toFixed(0)} ms`);
}

/**
 * A deployment's worker has long loaded its workflow code and made its connections; a fresh process does
 * that on its first message. One email from another workspace, waited for, keeps that out of the figures.
 */
async function warmUp(stack: EmailStack): Promise<void> {
  const other = await createTestWorkspace(stack.api);
  const from = `warm@${(await addTestDomain(stack, other.workspaceId)).domain}`;
  const to = `warm-${randomUUID().slice(0, 8)}@example.org`;
  await stack.api.call('POST', '/api/v1/emails', { key: other.apiKey, body: { from, to, subject: 'Warm-up', text: 'W', idempotencyKey: `warm-${randomUUID()}` } });
  if ((await receivedWithin(stack, to, performance.now(), 60_000)) === Number.POSITIVE_INFINITY) throw new Error('the warm-up email never arrived');
}

/** The burst at one provider rate, then light load on the same stack once the burst has drained. */
export async function burst(client: Client, rate: number): Promise<void> {
  const overrides = { SEND_RATE_PER_SECOND: String(rate), RATE_LIMIT_PER_SECOND: '100000' };
  const stack = await startEmailStack({ overrides });
  const worker = await workerInItsOwnProcess(client, stack, overrides);
  try {
    const workspace = await createTestWorkspace(stack.api, { plan: 'pro' });
    const from = `receipts@${(await addTestDomain(stack, workspace.workspaceId)).domain}`;
    await warmUp(stack);
    const cpu = readCpu(CPU_GROUPS);
    const started = performance.now();
    const startedAt = Date.now() / 1000;
    const { acceptedMs, statuses } = await sendBurst(stack, workspace.apiKey, from);
    const accepted = statuses.accepted ?? 0;
    const times = await sentTimes(stack.api.db, workspace.workspaceId, accepted);
    const drainSeconds = (performance.now() - started) / 1000;
    const spent = readCpu(CPU_GROUPS);
    const overall = accepted / (times[times.length - 1] - startedAt);
    const middle = (Math.floor(times.length * 0.9) - Math.floor(times.length * 0.1)) / (times[Math.floor(times.length * 0.9)] - times[Math.floor(times.length * 0.1)]);
    console.log(`${pad(`burst of ${BURST} at ${rate}/s: accepted`)} ${accepted} (${JSON.stringify(statuses)}) in ${(acceptedMs / 1000).toFixed(1)} s`);
    console.log(`${pad('  drained (first POST to last sent)')} ${drainSeconds.toFixed(1)} s: ${overall.toFixed(1)} sends/s, ${((overall / rate) * 100).toFixed(1)}% of ${rate}/s`);
    console.log(`${pad('  steady rate (middle 80% of sends)')} ${middle.toFixed(1)} sends/s, ${((middle / rate) * 100).toFixed(1)}% of ${rate}/s`);
    // dispatched_at is written once a round's starts have returned: with batches that is right after the
    // first start; with a round of many single starts (SEND_BATCH_THRESHOLD=0) it can come after the first send.
    const [{ dispatched }] = await stack.api.db.query<{ dispatched: number }>(
      "SELECT EXTRACT(EPOCH FROM min(dispatched_at))::float AS dispatched FROM messages WHERE workspace_id = $1 AND subject = 'Your receipt'",
      { bind: [workspace.workspaceId], type: QueryTypes.SELECT },
    );
    console.log(`${pad('  after the first POST')} first workflow started ${(dispatched - startedAt).toFixed(2)} s, first sent ${(times[0] - startedAt).toFixed(2)} s`);
    console.log(`${pad('  sends per 5 s from the first POST')} ${perFiveSeconds(times, startedAt).join(' ')}`);
    console.log(`${pad('  where the time went (% of one core)')} ${timeSpent(cpu, spent, drainSeconds)}`);
    const { count: batches } = await client.workflow.count(`WorkspaceId = "${workspace.workspaceId}" AND WorkflowType = "sendBatchWorkflow"`).catch(() => ({ count: NaN }));
    const { count: singles } = await client.workflow.count(`WorkspaceId = "${workspace.workspaceId}" AND WorkflowType = "sendMessageWorkflow"`).catch(() => ({ count: NaN }));
    console.log(`${pad('  workflows that carried the burst')} ${batches} batches, ${singles} single sends`);
    await lightLoad(stack, workspace.workspaceId, workspace.apiKey, from);
  } finally {
    await worker.stop();
    await stack.close();
  }
}
