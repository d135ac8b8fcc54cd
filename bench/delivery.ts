import { execFileSync } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { readFileSync } from 'node:fs';
import type { Client } from '@temporalio/client';
import { connectTemporal } from '../temporal/connection';
import { QueryTypes } from 'sequelize';
import { countInFlight } from '../db/repositories/dispatch-queue';
import { startDnsServer, type TestDnsServer } from '../test/helpers/dns-server';
import { type EmailStack, startEmailStack } from '../test/helpers/email-stack';
import { addTestDomain, createTestWorkspace } from '../test/helpers/workspaces';
import { queueMessages } from '../test/helpers/factories';
import '../test/helpers/quiet-temporal-runtime';
import { NativeConnection, Worker } from '@temporalio/worker';
import { oneActivityWorkflow } from './workflows/one-activity';
import { sendMessageWorkflow } from '../workflows/send-message';
import { cpuPerThousand, readCpu } from './cpu-meter';
import { sentTimes } from './sent-times';
import { summary } from './stats';
import { workerInItsOwnProcess } from './worker-process';
import { burst, CPU_GROUPS, receivedWithin } from './delivery-burst';

/**
 * `npm run bench -- delivery`: the delivery engine (docs/delivery.md) under a backlog, beside the bare
 * workflow start rate of the same Temporal server in the same run.
 * - burst (bench/delivery-burst.ts): BENCH_BURST (10,000) emails through POST /emails/batch at each of
 *   BENCH_RATES, the drain's rate and where the time went, then light-load latency on the same stack;
 * - fairness: workspace A has BENCH_BACKLOG (200,000) messages waiting at the default 14/s; workspace B then
 *   verifies a domain and sends one email, BENCH_TRIES (20) times: how long B's verify and B's email take;
 * - pressure, during that drain: running workflows, messages in flight, and the Temporal server's CPU;
 * - throughput at BENCH_RATES (200 and 1,000/s) with an instantly accepting SMTP sink: transactional and
 *   bulk deliveries per second against the configured rate, and the CPU each 1,000 sends cost.
 * The worker runs in its own process, as `npm start` runs it; BENCH_WORKER=inline runs it in the
 * benchmark's process instead (as the test stack does).
 */
const BACKLOG = Number(process.env.BENCH_BACKLOG ?? 200_000);
const TRIES = Number(process.env.BENCH_TRIES ?? 20);
const RATES = (process.env.BENCH_RATES ?? '200,1000').split(',').map(Number);
const SECONDS = Number(process.env.BENCH_SECONDS ?? 20);
const PHASES = new Set((process.env.BENCH_PHASES ?? 'starts,burst,fairness,throughput').split(','));
const TEMPORAL = process.env.TEMPORAL_ADDRESS ?? '127.0.0.1:7244';
const WORKER_PROCESS = process.env.BENCH_WORKER !== 'inline';

const pad = (label: string) => `  ${label.padEnd(46)}`;
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

async function bareStarts(client: Client): Promise<number> {
  const taskQueue = `bench-${randomUUID()}`;
  const count = 1_000;
  let next = 0;
  const started = performance.now();
  await Promise.all(
    Array.from({ length: 32 }, async () => {
      for (let i = next++; i < count; i = next++) {
        await client.workflow.start(sendMessageWorkflow, { taskQueue, workflowId: `bench-start-${randomUUID()}`, args: [{ workspaceId: randomUUID(), messageId: randomUUID(), sendsTaskQueue: taskQueue }] });
      }
    }),
  );
  const rate = count / ((performance.now() - started) / 1000);
  console.log(`${pad('bare workflow starts (baseline, same server)')} ${rate.toFixed(0).padStart(7)} starts/s`);
  return rate;
}

/**
 * The second baseline: workflows of the transactional send's shape (one activity on another queue) with
 * no-op work, run to completion by a worker in this process. What a workflow per message allows here.
 */
async function bareOneActivityWorkflows(client: Client): Promise<number> {
  const queue = `bench-${randomUUID()}`;
  const connection = await NativeConnection.connect({ address: TEMPORAL });
  const workflows = await Worker.create({ connection, taskQueue: queue, workflowsPath: require.resolve('./workflows/one-activity') });
  const activities = await Worker.create({ connection, taskQueue: `${queue}-activities`, activities: { noop: async () => undefined } });
  const count = 1_000;
  const cpu = readCpu(CPU_GROUPS);
  let rate = 0;
  await workflows.runUntil(() =>
    activities.runUntil(async () => {
      let next = 0;
      const started = performance.now();
      await Promise.all(
        Array.from({ length: 32 }, async () => {
          for (let i = next++; i < count; i = next++) {
            await client.workflow.execute(oneActivityWorkflow, { taskQueue: queue, workflowId: `bench-one-${randomUUID()}`, args: [`${queue}-activities`] });
          }
        }),
      );
      rate = count / ((performance.now() - started) / 1000);
    }),
  );
  await connection.close();
  console.log(`${pad('bare workflows with one activity (baseline)')} ${rate.toFixed(0).padStart(7)} completed/s`);
  console.log(`${pad('')} ${cpuPerThousand(cpu, readCpu(CPU_GROUPS), count)}`);
  return rate;
}

/** CPU seconds the Temporal dev server has used so far (user + system), from /proc. */
function temporalCpuSeconds(): number | null {
  try {
    const pid = execFileSync('pgrep', ['-f', `temporal server start-dev.*--port ${TEMPORAL.split(':')[1]}`], { encoding: 'utf8' }).trim().split('\n')[0];
    const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1].split(' ');
    return (Number(fields[11]) + Number(fields[12])) / 100;
  } catch {
    return null;
  }
}

async function runningWorkflows(client: Client, stack: EmailStack): Promise<number> {
  const prefix = stack.api.config.TASK_QUEUE_PREFIX;
  const { count } = await client.workflow.count(`ExecutionStatus = "Running" AND (TaskQueue = "${prefix}default" OR TaskQueue = "${prefix}control")`);
  return count;
}

async function verifyDomain(stack: EmailStack, dns: TestDnsServer, key: string): Promise<number> {
  const name = `b-${randomUUID().slice(0, 8)}.example.com`;
  const created = (await stack.api.call('POST', '/api/v1/domains', { key, body: { name } })).body as { id: string; dnsRecords: Array<{ type: string; name: string; value: string }> };
  for (const record of created.dnsRecords) if (record.type === 'TXT') dns.setTxt(record.name, record.value);
  const started = performance.now();
  const verified = await stack.api.call('POST', `/api/v1/domains/${created.id}/verify`, { key });
  const took = performance.now() - started;
  if ((verified.body as { status?: string }).status !== 'verified') throw new Error(`verify answered ${JSON.stringify(verified.body)}`);
  return took;
}

async function fairness(client: Client): Promise<void> {
  const dns = await startDnsServer();
  // The spec's provider rate: the backlog drains at 14/s, as it would on a default deployment.
  const stack = await startEmailStack({ overrides: { DNS_SERVERS: dns.address, RATE_LIMIT_PER_SECOND: '1000', SEND_RATE_PER_SECOND: '14' } });
  try {
    const a = await createTestWorkspace(stack.api, { plan: 'pro' });
    const fromA = `a@${(await addTestDomain(stack, a.workspaceId)).domain}`;
    const queued = performance.now();
    await queueMessages(stack.api.db, a.workspaceId, { kind: 'transactional', count: BACKLOG, from: fromA, toPrefix: 'a' });
    console.log(`${pad(`workspace A: ${BACKLOG} messages accepted`)} in ${((performance.now() - queued) / 1000).toFixed(1)} s; provider rate ${stack.api.config.SEND_RATE_PER_SECOND}/s`);
    await sleep(5_000);

    const pressure = { running: [] as number[], inFlight: [] as number[], cpu: [] as number[] };
    let sampling = true;
    const sampler = (async () => {
      for (let cpu = temporalCpuSeconds(); sampling; ) {
        await sleep(1_000);
        pressure.running.push(await runningWorkflows(client, stack));
        pressure.inFlight.push((await countInFlight(stack.api.db, 'email')).transactional);
        const now = temporalCpuSeconds();
        if (now !== null && cpu !== null) pressure.cpu.push((now - cpu) * 100);
        cpu = now;
      }
    })();

    const verifies: number[] = [];
    const emails: number[] = [];
    for (let i = 0; i < TRIES; i += 1) {
      const b = await createTestWorkspace(stack.api);
      verifies.push(await verifyDomain(stack, dns, b.apiKey));
      const fromB = `b@${(await addTestDomain(stack, b.workspaceId)).domain}`;
      const to = `b-${i}@example.org`;
      const sent = performance.now();
      await stack.api.call('POST', '/api/v1/emails', { key: b.apiKey, body: { from: fromB, to, subject: 'Reset', text: 'T', idempotencyKey: `bench-b-${randomUUID()}` } });
      emails.push(await receivedWithin(stack, to, sent, 30_000));
    }
    sampling = false;
    await sampler;
    const verify = summary(verifies);
    const email = summary(emails);
    console.log(`${pad(`B's POST /domains/:id/verify (${TRIES} tries)`)} p50 ${verify.p50.toFixed(0)} ms   p99 ${verify.p99.toFixed(0)} ms   (target < 2,000 ms)`);
    console.log(`${pad(`B's email, POST to provider (${TRIES} tries)`)} p50 ${email.p50.toFixed(0)} ms   p99 ${email.p99.toFixed(0)} ms   (target < 5,000 ms)`);
    const max = (values: number[]) => (values.length ? Math.max(...values) : NaN);
    const mean = (values: number[]) => values.reduce((sum, value) => sum + value, 0) / Math.max(1, values.length);
    console.log(`${pad('pressure: running workflows (max)')} ${max(pressure.running)}   in flight (max) ${max(pressure.inFlight)}   Temporal CPU mean ${mean(pressure.cpu).toFixed(0)}% max ${max(pressure.cpu).toFixed(0)}% of one core`);
    const [{ left }] = await stack.api.db.query<{ left: string }>("SELECT count(*) AS left FROM messages WHERE workspace_id = $1 AND status = 'queued'", { bind: [a.workspaceId], type: QueryTypes.SELECT });
    console.log(`${pad("workspace A's backlog still waiting")} ${left}`);
  } finally {
    await stack.close();
    await dns.close();
  }
}

/** Deliveries per second once the engine runs steadily: the middle 80% of the sends of one workspace. */
async function deliveryRate(stack: EmailStack, workspaceId: string, count: number): Promise<{ rate: number; span: number }> {
  const times = await sentTimes(stack.api.db, workspaceId, count);
  const from = Math.floor(times.length * 0.1);
  const to = Math.floor(times.length * 0.9);
  return { rate: (to - from) / (times[to] - times[from]), span: times[times.length - 1] - times[0] };
}

async function throughput(client: Client, rate: number): Promise<void> {
  const overrides = { SEND_RATE_PER_SECOND: String(rate), RATE_LIMIT_PER_SECOND: '1000' };
  const stack = await startEmailStack({ overrides });
  const worker = WORKER_PROCESS ? await workerInItsOwnProcess(client, stack, overrides) : null;
  try {
    for (const kind of (process.env.BENCH_KINDS ?? 'transactional,campaign').split(',') as Array<'transactional' | 'campaign'>) {
      const workspace = await createTestWorkspace(stack.api, { plan: 'pro' });
      const from = `a@${(await addTestDomain(stack, workspace.workspaceId)).domain}`;
      // One workflow each: Temporal, not the provider, is the limit for transactional sends on this server.
      const count = kind === 'transactional' ? Math.min(rate * SECONDS, 3_000) : rate * SECONDS;
      const cpu = readCpu(CPU_GROUPS);
      await queueMessages(stack.api.db, workspace.workspaceId, { kind, count, from, campaignId: kind === 'campaign' ? randomUUID() : undefined });
      const { rate: achieved, span } = await deliveryRate(stack, workspace.workspaceId, count);
      const label = kind === 'transactional' ? 'transactional (a workflow each)' : 'bulk (batches)';
      console.log(`${pad(`${label} at ${rate}/s`)} ${achieved.toFixed(1).padStart(7)} sends/s   ${((achieved / rate) * 100).toFixed(1)}% of configured   (${count} sends, ${span.toFixed(1)} s first to last)`);
      console.log(`${pad('')} ${cpuPerThousand(cpu, readCpu(CPU_GROUPS), count)}`);
    }
  } finally {
    await worker?.stop();
    await stack.close();
  }
}

async function main(): Promise<void> {
  const client = await connectTemporal({ TEMPORAL_ADDRESS: TEMPORAL, TEMPORAL_NAMESPACE: 'default' });
  if (PHASES.has('starts')) {
    await bareStarts(client);
    await bareOneActivityWorkflows(client);
  }
  if (PHASES.has('burst')) {
    console.log('\nA transactional burst through POST /emails/batch, then light load (instantly accepting SMTP sink)');
    for (const rate of RATES) await burst(client, rate);
  }
  if (PHASES.has('fairness')) {
    console.log('\nFairness and pressure');
    await fairness(client);
  }
  if (PHASES.has('throughput')) {
    console.log('\nThroughput (instantly accepting SMTP sink)');
    for (const rate of RATES) await throughput(client, rate);
  }
  await client.connection.close();
}

main().then(
  () => process.exit(0),
  (err: unknown) => {
    console.error(err);
    process.exit(1);
  },
);
