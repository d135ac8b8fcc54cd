import type { Client } from '@temporalio/client';
import { connectTemporal } from '../temporal/connection';
import { QueryTypes, type Sequelize } from 'sequelize';
import { campaignWorkflowId } from '../core/ids';
import { createSequelize } from '../db/sequelize';
import { type EmailStack, startEmailStack } from '../test/helpers/email-stack';
import { createIsolatedDatabase } from '../test/helpers/isolated-database';
import { addTestDomain, createTestWorkspace } from '../test/helpers/workspaces';
import '../test/helpers/quiet-temporal-runtime';
import { summary } from './stats';
import { residentBytes, workerInItsOwnProcess } from './worker-process';

/**
 * `npm run bench -- campaign`: a campaign to a one-million-contact segment, on the whole stack (the API and
 * an SMTP sink as the provider in this process; the worker and dispatcher in their own, as `npm start` runs
 * them; Postgres, Redis and the Temporal dev server).
 * - the estimate (POST /campaigns/:id/estimate over HTTP) and the audience snapshot (the workflow's
 *   snapshot activity, from its history);
 * - for each provider rate of BENCH_RATES (14 and 500/s): time from the send's answer to the first message
 *   at the provider, the send rate over BENCH_SECONDS against the configured one, history events per 1,000
 *   recipients written (campaign workflow, and the delivery engine's batches), and the worker's memory;
 *   then the campaign is canceled.
 * BENCH_CONTACTS sizes the audience (5% opted out, 1% suppressed: excluded by the estimate and snapshot).
 */
const CONTACTS = Number(process.env.BENCH_CONTACTS ?? 1_000_000);
const SECONDS = Number(process.env.BENCH_SECONDS ?? 45);
const RATES = (process.env.BENCH_RATES ?? '14,500').split(',').map(Number);
const ESTIMATES = 3;

const pad = (label: string) => `  ${label.padEnd(52)}`;
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
const seconds = (ms: number) => `${(ms / 1000).toFixed(2)} s`;
const mib = (bytes: number) => `${(bytes / 1024 / 1024).toFixed(0)} MiB`;

async function timed(label: string, work: () => Promise<unknown>): Promise<void> {
  const started = performance.now();
  await work();
  console.log(`${pad(label)} ${seconds(performance.now() - started)}`);
}

async function seed(db: Sequelize, workspaceId: string): Promise<void> {
  await timed(`contacts (${CONTACTS.toLocaleString('en')})`, () =>
    db.query(
      `INSERT INTO contacts (id, workspace_id, attributes)
       SELECT gen_random_uuid(), $1, jsonb_build_object('firstName', 'First' || g, 'plan', (ARRAY['free', 'pro'])[1 + g % 2])
       FROM generate_series(1, $2::int) AS g`,
      { bind: [workspaceId, CONTACTS] },
    ),
  );
  await timed('email identities (one each, 5% opted out)', () =>
    db.query(
      `INSERT INTO contact_identities (workspace_id, channel, address, contact_id, consent, is_primary)
       SELECT $1, 'email', 'user' || n || '@example.com', id, CASE WHEN n % 20 = 0 THEN 'opted_out' ELSE 'opted_in' END, true
       FROM (SELECT id, row_number() OVER () AS n FROM contacts WHERE workspace_id = $1) numbered`,
      { bind: [workspaceId] },
    ),
  );
  await timed('suppressions (1%)', () =>
    db.query(
      `INSERT INTO suppressions (workspace_id, channel, address, reason)
       SELECT $1, 'email', 'user' || n || '@example.com', 'hard_bounce' FROM generate_series(7, $2::int, 100) AS n`,
      { bind: [workspaceId, CONTACTS] },
    ),
  );
  await timed('VACUUM ANALYZE', async () => {
    for (const table of ['contacts', 'contact_identities', 'suppressions']) await db.query(`VACUUM ANALYZE ${table}`);
  });
}

/** Samples the worker process's resident memory until stopped. */
function memorySampler(workerPid: number) {
  let peak = 0;
  const timer = setInterval(() => {
    peak = Math.max(peak, residentBytes(workerPid));
  }, 200);
  return { stop: () => (clearInterval(timer), peak) };
}

/** Events of every run of the workflow (continue-as-new makes several). */
async function historyEvents(client: Client, workflowIds: readonly string[]): Promise<number> {
  let events = 0;
  for (const workflowId of workflowIds) {
    for await (const run of client.workflow.list({ query: `WorkflowId = "${workflowId}"` })) {
      events += (await client.workflow.getHandle(workflowId, run.runId).fetchHistory()).events?.length ?? 0;
    }
  }
  return events;
}

/** How long the snapshot activity ran, from the campaign workflow's first run. */
async function snapshotMs(client: Client, campaignId: string): Promise<number | null> {
  const history = await client.workflow.getHandle(campaignWorkflowId(campaignId)).fetchHistory();
  const at = (event: { eventTime?: { seconds?: unknown; nanos?: number | null } | null }) =>
    Number(event.eventTime?.seconds ?? 0) * 1000 + (event.eventTime?.nanos ?? 0) / 1e6;
  const events = history.events ?? [];
  const scheduled = events.find((event) => event.activityTaskScheduledEventAttributes?.activityType?.name === 'snapshotCampaign');
  const started = events.find((event) => event.activityTaskStartedEventAttributes?.scheduledEventId?.toString() === scheduled?.eventId?.toString());
  const completed = events.find((event) => event.activityTaskCompletedEventAttributes?.scheduledEventId?.toString() === scheduled?.eventId?.toString());
  return started && completed ? at(completed) - at(started) : null;
}

async function run(
  stack: EmailStack,
  client: Client,
  workerPid: number,
  workspace: { workspaceId: string; apiKey: string },
  segmentId: string,
  rate: number,
  estimate: boolean,
) {
  const call = stack.api.as(workspace.apiKey);
  const from = `News <news@${(await addTestDomain(stack, workspace.workspaceId)).domain}>`;
  const created = await call('POST', '/campaigns', { name: `bench ${rate}/s`, segmentId, fromAddress: from, subject: 'Bench', html: '<p>Hello from the benchmark</p>' });
  const id = (created.body as { id: string }).id;
  let token = '';
  const estimates: number[] = [];
  for (let i = 0; i < (estimate ? ESTIMATES : 1); i += 1) {
    const started = performance.now();
    const answer = await call('POST', `/campaigns/${id}/estimate`);
    estimates.push(performance.now() - started);
    if (answer.status !== 200) throw new Error(`estimate: ${answer.status} ${JSON.stringify(answer.body)}`);
    token = (answer.body as { confirmationToken: string }).confirmationToken;
    if (estimate && i === 0) console.log(`${pad('estimate answer')} ${JSON.stringify((answer.body as { estimate: object }).estimate)}`);
  }
  if (estimate) console.log(`${pad(`estimate over HTTP (${ESTIMATES} runs)`)} p50 ${seconds(summary(estimates).p50)}, slowest ${seconds(Math.max(...estimates))}   (target < 2 s)`);

  const baseline = residentBytes(workerPid);
  const memory = memorySampler(workerPid);
  const sendStarted = performance.now();
  const sent = await call('POST', `/campaigns/${id}/send`, { confirmationToken: token });
  if (sent.status !== 202) throw new Error(`send: ${sent.status} ${JSON.stringify(sent.body)}`);
  const answered = performance.now();
  let firstAt = 0;
  for (; firstAt === 0; await sleep(20)) {
    if (stack.sink.received.length > 0) firstAt = performance.now();
    if (performance.now() - answered > 300_000) throw new Error('no message in 5 minutes');
  }
  // The sink keeps every mail; counted in the database instead, so its memory is not the worker's.
  const drain = setInterval(() => (stack.sink.received.length = 0), 500);
  await sleep(SECONDS * 1000);
  clearInterval(drain);
  await call('POST', `/campaigns/${id}/cancel`);
  await sleep(2_000);
  const peak = memory.stop();

  const snapshot = await snapshotMs(client, id);
  const [row] = await stack.api.db.query<{ recipients: number; written: number }>(
    'SELECT recipient_count AS recipients, materialized AS written FROM campaigns WHERE id = $1',
    { bind: [id], type: QueryTypes.SELECT },
  );
  const times = (
    await stack.api.db.query<{ at: number }>(
      `SELECT EXTRACT(EPOCH FROM e.created_at)::float AS at FROM message_events e JOIN messages m ON m.id = e.message_id
       WHERE m.workspace_id = $1 AND m.campaign_id = $2 AND e.type = 'sent' ORDER BY e.created_at`,
      { bind: [workspace.workspaceId, id], type: QueryTypes.SELECT },
    )
  ).map((time) => time.at);
  const lo = Math.floor(times.length * 0.1);
  const hi = Math.floor(times.length * 0.9);
  const achieved = (hi - lo) / (times[hi] - times[lo]);
  const batches = await stack.api.db.query<{ workflow_id: string }>(
    'SELECT DISTINCT workflow_id FROM messages WHERE workspace_id = $1 AND campaign_id = $2 AND workflow_id IS NOT NULL',
    { bind: [workspace.workspaceId, id], type: QueryTypes.SELECT },
  );
  const campaignEvents = await historyEvents(client, [campaignWorkflowId(id)]);
  const batchEvents = await historyEvents(client, batches.map((batch) => batch.workflow_id));

  console.log(`\nProvider at ${rate}/s (${SECONDS} s of sending, then canceled)`);
  console.log(`${pad('audience snapshot (the activity, from its history)')} ${snapshot === null ? 'n/a' : seconds(snapshot)} for ${row.recipients} recipients   (target < 10 s)`);
  console.log(`${pad('send answered')} ${seconds(answered - sendStarted)}`);
  console.log(`${pad('first message at the provider, after the answer')} ${seconds(firstAt - answered)}`);
  console.log(`${pad('send rate (middle 80% of the sends)')} ${achieved.toFixed(1)}/s = ${((achieved / rate) * 100).toFixed(1)}% of ${rate}/s   (${times.length} sent)`);
  console.log(`${pad('written to the outbox when canceled')} ${row.written}`);
  console.log(`${pad('campaign workflow history')} ${campaignEvents} events = ${((campaignEvents / Math.max(1, row.written)) * 1000).toFixed(1)} per 1,000 recipients written   (target <= 50)`);
  console.log(`${pad('delivery batches history (the engine)')} ${batchEvents} events in ${batches.length} batches = ${((batchEvents / Math.max(1, times.length)) * 1000).toFixed(1)} per 1,000 sent`);
  console.log(`${pad('memory of the worker process (worker + dispatcher)')} rss ${mib(baseline)} before, peak ${mib(peak)}`);
}

async function main(): Promise<void> {
  const database = await createIsolatedDatabase(process.env.DATABASE_URL ?? '');
  const client = await connectTemporal({ TEMPORAL_ADDRESS: process.env.TEMPORAL_ADDRESS ?? '127.0.0.1:7244', TEMPORAL_NAMESPACE: 'default' });
  try {
    let workspace: { workspaceId: string; apiKey: string } | null = null;
    let segmentId = '';
    for (const [index, rate] of RATES.entries()) {
      const overrides = { SEND_RATE_PER_SECOND: String(rate), RATE_LIMIT_PER_SECOND: '1000' };
      const stack = await startEmailStack({ overrides: { ...overrides, DATABASE_URL: database.url } });
      const worker = await workerInItsOwnProcess(client, stack, overrides);
      try {
        if (!workspace) {
          workspace = await createTestWorkspace(stack.api, { plan: 'pro', name: 'campaign benchmark' });
          console.log(`\nSeeding one workspace in SQL`);
          // Its own connection: the API's has a statement timeout shorter than a million-row insert.
          const seeder = createSequelize(database.url);
          await seed(seeder, workspace.workspaceId).finally(() => seeder.close());
          const segment = await stack.api.as(workspace.apiKey)('POST', '/segments', {
            name: 'everyone with an email',
            definition: { operator: 'and', rules: [{ type: 'identity', operator: 'has', channel: 'email' }] },
          });
          segmentId = (segment.body as { id: string }).id;
          console.log('');
        }
        await run(stack, client, worker.pid, workspace, segmentId, rate, index === 0);
      } finally {
        await worker.stop();
        await stack.close();
      }
    }
  } finally {
    await client.connection.close();
    await database.drop();
  }
}

main().then(
  () => process.exit(0),
  (err: unknown) => {
    console.error(err);
    process.exit(1);
  },
);
