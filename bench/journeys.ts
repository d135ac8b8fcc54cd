import { randomUUID } from 'node:crypto';
import { loadavg } from 'node:os';
import type { Client } from '@temporalio/client';
import { connectTemporal } from '../temporal/connection';
import { temporal } from '@temporalio/proto';
import { QueryTypes, type Sequelize } from 'sequelize';
import { loadConfig } from '../core/config';
import { enrollmentWorkflowId } from '../core/ids';
import { createSequelize } from '../db/sequelize';
import { createTestWorkspace } from '../test/helpers/workspaces';
import { journeyWorkflow } from '../workflows/journey';
import '../test/helpers/quiet-temporal-runtime';
import { startApiProcess } from './api-process';
import { cpuPerThousand, readCpu } from './cpu-meter';
import { load, type LoadResult } from './load';
import { ms } from './stats';
import { residentBytes, startWorkerProcess } from './worker-process';

/**
 * `npm run bench -- journeys`:
 * - events ingested per second through POST /events (the API in its own process): an event no automation
 *   listens to, and an event that triggers an enrollment (stored, matched, the enrollment written and its
 *   journey started with signalWithStart), beside a bare authenticated route (POST /events for a contact
 *   that does not exist: auth, rate limit, validation, one lookup) and bare workflow starts on the same
 *   Temporal server;
 * - waiting enrollments: BENCH_ENROLLMENTS contacts enrolled through POST /automations/:id/enroll in a
 *   journey whose first node waits 30 days, the worker in its own process (as `npm start` runs it): how
 *   fast they enroll, the worker's resident memory while all of them wait, and history events per
 *   enrollment.
 */
const EVENTS = Number(process.env.BENCH_EVENTS ?? 5_000);
const ENROLLMENTS = Number(process.env.BENCH_ENROLLMENTS ?? 100_000);
const CONCURRENCY = Number(process.env.BENCH_CONCURRENCY ?? 32);
const SAMPLE_HISTORIES = 20;
const TEMPORAL_PORT = (process.env.TEMPORAL_ADDRESS ?? '').split(':').at(-1) ?? '';
/**
 * Whose CPU a waiting enrollment costs: the worker process (workflow thread, local activities, the enroll
 * activity's starts), the API, this benchmark's database's backends, and the Temporal server of this run.
 */
const cpuGroups = (workerPid: number, apiPid: number, database: string) => ({
  worker: workerPid,
  api: apiPid,
  postgres: new RegExp(`^postgres: \\S+ ${database} `),
  temporal: new RegExp(`temporal server start-dev .*--port ${TEMPORAL_PORT} `),
});

const mib = (bytes: number) => `${(bytes / 1024 / 1024).toFixed(0)} MiB`;
const sleep = (milliseconds: number) => new Promise((resolve) => setTimeout(resolve, milliseconds));
const line = (label: string, result: LoadResult, unit: string) =>
  console.log(`  ${label.padEnd(46)} ${result.perSecond.toFixed(0).padStart(6)} ${unit}   p50 ${ms(result.latency.p50)}   p99 ${ms(result.latency.p99)}   ${JSON.stringify(result.statuses)}`);

async function call(url: string, key: string, method: string, path: string, body?: unknown): Promise<{ status: number; body: Record<string, unknown> }> {
  const response = await fetch(`${url}/api/v1${path}`, {
    method,
    headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  return { status: response.status, body: (await response.json().catch(() => ({}))) as Record<string, unknown> };
}

async function must(answer: Promise<{ status: number; body: Record<string, unknown> }>, what: string): Promise<Record<string, unknown>> {
  const { status, body } = await answer;
  if (status >= 300) throw new Error(`${what}: ${status} ${JSON.stringify(body)}`);
  return body;
}

/** Contacts with an opted-in email each, all members of one new list; returns the list's id and the contact ids. */
async function seedContacts(db: Sequelize, workspaceId: string, count: number): Promise<{ listId: string; contactIds: string[] }> {
  const listId = randomUUID();
  await db.query('INSERT INTO lists (id, workspace_id, name) VALUES ($1, $2, $3)', { bind: [listId, workspaceId, `bench ${listId}`] });
  const rows = await db.query<{ id: string }>(
    `INSERT INTO contacts (id, workspace_id, attributes)
     SELECT gen_random_uuid(), $1, jsonb_build_object('firstName', 'First' || g) FROM generate_series(1, $2::int) AS g RETURNING id`,
    { bind: [workspaceId, count], type: QueryTypes.SELECT },
  );
  await db.query(
    `INSERT INTO contact_identities (workspace_id, channel, address, contact_id, consent, is_primary, verified)
     SELECT $1, 'email', c.id || '@example.com', c.id, 'opted_in', true, true FROM contacts c WHERE c.workspace_id = $1`,
    { bind: [workspaceId] },
  );
  await db.query('INSERT INTO list_members (workspace_id, list_id, contact_id) SELECT $1, $2, id FROM contacts WHERE workspace_id = $1', {
    bind: [workspaceId, listId],
  });
  await db.query('UPDATE lists SET contact_count = $2 WHERE id = $1', { bind: [listId, count] });
  for (const table of ['contacts', 'contact_identities', 'list_members']) await db.query(`VACUUM ANALYZE ${table}`);
  return { listId, contactIds: rows.map((row) => row.id) };
}

/** An active automation: triggered by `trigger` (if given), waiting 30 days, then one email, then the end. */
async function activeAutomation(url: string, key: string, templateId: string, from: string, trigger?: string): Promise<string> {
  const created = await must(
    call(url, key, 'POST', '/automations', {
      name: `bench ${randomUUID()}`,
      ...(trigger && { trigger: { event: trigger, match: {} } }),
      graph: {
        entry: 'wait',
        nodes: [
          { id: 'wait', type: 'wait', duration: 'P30D', next: 'hello' },
          { id: 'hello', type: 'message', preferredChannel: 'email', templateByChannel: { email: templateId }, from, next: null },
        ],
      },
    }),
    'POST /automations',
  );
  const id = created.id as string;
  await must(call(url, key, 'POST', `/automations/${id}/activate`), 'activate');
  return id;
}

async function bareStarts(client: Client, count: number): Promise<number> {
  const taskQueue = `bench-${randomUUID()}`;
  let next = 0;
  const started = performance.now();
  await Promise.all(
    Array.from({ length: CONCURRENCY }, async () => {
      for (let i = next++; i < count; i = next++) {
        await client.workflow.start(journeyWorkflow, { taskQueue, workflowId: `bench-start-${randomUUID()}`, args: [{ workspaceId: randomUUID(), enrollmentId: randomUUID() }] });
      }
    }),
  );
  return count / ((performance.now() - started) / 1000);
}

async function ingestion(db: Sequelize, client: Client, prefix: string): Promise<void> {
  const config = loadConfig(process.env);
  const api = await startApiProcess({ RATE_LIMIT_PER_SECOND: '1000000', LOG_LEVEL: 'silent', TASK_QUEUE_PREFIX: prefix });
  const { apiKey, workspaceId, domain } = await createTestWorkspace(db, { plan: 'pro', domain: { masterKey: config.MASTER_KEY } });
  const { contactIds } = await seedContacts(db, workspaceId, EVENTS);
  const template = await must(call(api.url, apiKey, 'POST', '/templates', { name: 'bench', subject: 'Hello', body: 'Hello {{contact.firstName}}', format: 'markdown' }), 'POST /templates');
  await activeAutomation(api.url, apiKey, template.id as string, `news@${domain}`, 'signed_up');
  const contactAt = (i: number) => contactIds[i % contactIds.length];
  const events = (path: string, body: (i: number) => unknown) => load({ url: api.url, path, key: apiKey, count: EVENTS, concurrency: CONCURRENCY, body });

  console.log(`events (${EVENTS.toLocaleString('en')} each, ${CONCURRENCY} at a time; API in its own process, no worker)`);
  await events('/api/v1/events', (i) => ({ event: 'warm_up', contactId: contactAt(i) }));
  line('bare route (POST /events, unknown contact: 404)', await events('/api/v1/events', () => ({ event: 'page_viewed', contactId: randomUUID() })), 'req/s   ');
  line('POST /events, nothing listens', await events('/api/v1/events', (i) => ({ event: 'page_viewed', contactId: contactAt(i), properties: { path: `/p/${i}` } })), 'events/s');
  line('POST /events, each starts an enrollment', await events('/api/v1/events', (i) => ({ event: 'signed_up', contactId: contactIds[i] })), 'events/s');
  console.log(`  ${'bare workflow starts (same server)'.padEnd(46)} ${(await bareStarts(client, 1_000)).toFixed(0).padStart(6)} starts/s`);
  await api.stop();
  await db.query('DELETE FROM workspaces WHERE id = $1', { bind: [workspaceId] });
}

/** Waits for the worker process to poll its workflow task queue (bundling the workflows takes it seconds). */
async function polling(client: Client, namespace: string, taskQueue: string): Promise<void> {
  for (const deadline = Date.now() + 120_000; Date.now() < deadline; await sleep(250)) {
    const described = await client.workflowService.describeTaskQueue({
      namespace,
      taskQueue: { name: taskQueue },
      taskQueueType: temporal.api.enums.v1.TaskQueueType.TASK_QUEUE_TYPE_WORKFLOW,
    });
    if (described.pollers?.length) return;
  }
  throw new Error('the worker did not poll within 120 s');
}

async function historyEventsPerEnrollment(client: Client, enrollmentIds: readonly string[]): Promise<number> {
  let events = 0;
  for (const id of enrollmentIds) events += (await client.workflow.getHandle(enrollmentWorkflowId(id)).fetchHistory()).events?.length ?? 0;
  return events / enrollmentIds.length;
}

async function waiting(db: Sequelize, client: Client, prefix: string): Promise<void> {
  const config = loadConfig(process.env);
  const worker = await startWorkerProcess({ DATABASE_URL: config.DATABASE_URL, TASK_QUEUE_PREFIX: prefix, SEND_DISPATCHER: 'false' });
  const api = await startApiProcess({ RATE_LIMIT_PER_SECOND: '1000000', LOG_LEVEL: 'silent', TASK_QUEUE_PREFIX: prefix });
  try {
    await polling(client, config.TEMPORAL_NAMESPACE, `${prefix}default`);
    const { apiKey, workspaceId, domain } = await createTestWorkspace(db, { plan: 'pro', domain: { masterKey: config.MASTER_KEY } });
    console.log(`waiting enrollments (${ENROLLMENTS.toLocaleString('en')}; worker in its own process)`);
    const seeding = performance.now();
    const { listId } = await seedContacts(db, workspaceId, ENROLLMENTS);
    console.log(`  ${'contacts and list seeded'.padEnd(46)} ${((performance.now() - seeding) / 1000).toFixed(1)} s`);
    const template = await must(call(api.url, apiKey, 'POST', '/templates', { name: 'bench', subject: 'Hello', body: 'Hello {{contact.firstName}}', format: 'markdown' }), 'POST /templates');
    const automationId = await activeAutomation(api.url, apiKey, template.id as string, `news@${domain}`);
    // The yardstick of the same run: Temporal taking bare starts (no worker runs them), 32 at a time.
    console.log(`  ${'bare workflow starts (same server, same run)'.padEnd(46)} ${(await bareStarts(client, 1_000)).toFixed(0).padStart(6)} starts/s`);
    const idle = residentBytes(worker.pid);
    const groups = cpuGroups(worker.pid, api.pid, new URL(config.DATABASE_URL).pathname.slice(1));
    const cpu = readCpu(groups);
    const started = performance.now();
    await must(call(api.url, apiKey, 'POST', `/automations/${automationId}/enroll`, { listId }), 'enroll');
    let peak = idle;
    let lastReport = started;
    for (;;) {
      await sleep(500);
      peak = Math.max(peak, residentBytes(worker.pid));
      const [row] = await db.query<{ waiting: string; enrolled: string }>(
        `SELECT count(*) FILTER (WHERE current_node_id = 'wait') AS waiting, count(*) AS enrolled FROM enrollments WHERE workspace_id = $1 AND automation_id = $2`,
        { bind: [workspaceId, automationId], type: QueryTypes.SELECT },
      );
      if (performance.now() - lastReport > 30_000) {
        lastReport = performance.now();
        console.log(`    … ${row.enrolled} enrolled, ${row.waiting} waiting after ${((lastReport - started) / 1000).toFixed(0)} s, worker ${mib(residentBytes(worker.pid))}`);
      }
      if (Number(row.waiting) >= ENROLLMENTS) break;
    }
    const seconds = (performance.now() - started) / 1000;
    const used = cpuPerThousand(cpu, readCpu(groups), ENROLLMENTS);
    console.log(`  ${'enrolled and waiting'.padEnd(46)} ${seconds.toFixed(1)} s (${(ENROLLMENTS / seconds).toFixed(0)} enrollments/s)`);
    console.log(`  ${used} (load average ${loadavg()[0].toFixed(1)})`);
    await sleep(10_000);
    const holding = residentBytes(worker.pid);
    console.log(`  ${'worker resident memory'.padEnd(46)} idle ${mib(idle)}, peak ${mib(peak)}, holding all waiting ${mib(holding)}`);
    const sample = await db.query<{ id: string }>('SELECT id FROM enrollments WHERE workspace_id = $1 ORDER BY random() LIMIT $2', {
      bind: [workspaceId, SAMPLE_HISTORIES],
      type: QueryTypes.SELECT,
    });
    const events = await historyEventsPerEnrollment(client, sample.map((row) => row.id));
    console.log(`  ${'history events per waiting enrollment'.padEnd(46)} ${events.toFixed(1)} (sample of ${sample.length})`);
  } finally {
    await api.stop();
    await worker.stop();
  }
}

async function main(): Promise<void> {
  const config = loadConfig(process.env);
  const db = createSequelize(config.DATABASE_URL);
  const client = await connectTemporal(config);
  // A prefix per part and run: journeys started by the ingestion part wait on queues nobody polls.
  const prefix = () => `bench-${randomUUID().slice(0, 8)}-`;
  try {
    if (process.env.BENCH_PART !== 'waiting') await ingestion(db, client, prefix());
    if (process.env.BENCH_PART !== 'events') await waiting(db, client, prefix());
  } finally {
    await client.connection.close();
    await db.close();
  }
}

main().catch((error: unknown) => {
  console.error(error);
  process.exit(1);
});
