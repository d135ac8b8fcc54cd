import { randomUUID } from 'node:crypto';
import type { Client, WorkflowClient } from '@temporalio/client';
import { defineSearchAttributeKey, type SearchAttributePair, SearchAttributeType } from '@temporalio/common';
import { pino } from 'pino';
import { QueryTypes } from 'sequelize';
import { connectTemporal } from '../../temporal/connection';
import { registerSearchAttributes } from '../../scripts/search-attributes';
import { startEmailStack, type EmailStack } from '../helpers/email-stack';
import { createTestWorkspace } from '../helpers/workspaces';
import { queueMessages } from '../helpers/factories';
import { dispatcherChannels, runDispatcher } from '../../workers/dispatcher';
import { sendBatchWorkflow } from '../../workflows/send-batch';

// Adaptive batching (docs/delivery.md): a workspace's transactional backlog travels in batch workflows, a
// shallow outbox keeps one send:<id> workflow per message. A provider of 100/s with a 0.5 s lead time: 50
// in flight; SEND_BATCH_THRESHOLD at its default (20).
let stack: EmailStack;
let client: Client;
beforeAll(async () => {
  stack = await startEmailStack({ overrides: { SEND_RATE_PER_SECOND: '100', SEND_LEAD_TIME_MS: '500', SEND_IN_FLIGHT_MIN: '10' } });
  client = await connectTemporal(stack.api.config);
  // The shared dev server may predate MessageIds, as `npm test` and `npm start` find it (scripts/search-attributes.ts).
  await registerSearchAttributes(client, stack.api.config.TEMPORAL_NAMESPACE);
});
afterAll(async () => {
  await client.connection.close();
  await stack.close();
});

jest.setTimeout(120_000);

async function sender() {
  const workspace = await createTestWorkspace(stack.api, { plan: 'pro', domain: true });
  return { ...workspace, from: `a@${workspace.domain}` };
}

async function carriers(workspaceId: string): Promise<Map<string, string[]>> {
  const rows = await stack.api.db.query<{ id: string; workflow_id: string }>('SELECT id, workflow_id FROM messages WHERE workspace_id = $1 AND workflow_id IS NOT NULL ORDER BY created_at', {
    bind: [workspaceId],
    type: QueryTypes.SELECT,
  });
  const byWorkflow = new Map<string, string[]>();
  for (const row of rows) byWorkflow.set(row.workflow_id, [...(byWorkflow.get(row.workflow_id) ?? []), row.id]);
  return byWorkflow;
}

async function sentEvents(messageIds: readonly string[]): Promise<Map<string, number>> {
  const rows = await stack.api.db.query<{ message_id: string; n: string }>(
    `SELECT message_id, count(*) AS n FROM message_events WHERE type = 'sent' AND message_id = ANY($1::uuid[]) GROUP BY message_id`,
    { bind: [messageIds], type: QueryTypes.SELECT },
  );
  return new Map(rows.map((row) => [row.message_id, Number(row.n)]));
}

async function workflowsFound(query: string): Promise<string[]> {
  const found: string[] = [];
  for await (const execution of client.workflow.list({ query })) found.push(execution.workflowId);
  return found;
}

/** A backlog of `count` transactional emails, all in the outbox before the dispatcher sees any. */
async function backlog(workspace: { workspaceId: string; from: string }, count: number, toPrefix: string): Promise<string[]> {
  await stack.stopDispatcher();
  try {
    return await queueMessages(stack.api.db, workspace.workspaceId, { kind: 'transactional', count, from: workspace.from, toPrefix });
  } finally {
    stack.startDispatcher();
  }
}

describe('adaptive batching of transactional mail', () => {
  let backlogged: { workspaceId: string; ids: string[]; carriers: Map<string, string[]> };

  it('a backlog of 150 travels in batch workflows of at most 50, each message sent once with its own sent event', async () => {
    const workspace = await sender();
    const ids = await backlog(workspace, 150, 'burst');
    for (const id of ids) await stack.waitForStatus(workspace.workspaceId, id, ['sent', 'failed'], 60_000);
    const received = stack.sink.received.filter((mail) => mail.recipients[0]?.startsWith('burst-')).map((mail) => mail.recipients[0]);
    expect(new Set(received).size).toBe(150);
    expect(received).toHaveLength(150);
    expect([...(await sentEvents(ids)).values()]).toEqual(ids.map(() => 1));

    const byWorkflow = await carriers(workspace.workspaceId);
    const batches = [...byWorkflow].filter(([workflowId]) => workflowId.startsWith('send-batch:'));
    expect(batches.every(([, members]) => members.length <= 50)).toBe(true);
    // Only the tail, once fewer than SEND_BATCH_THRESHOLD wait, may go one workflow per message.
    expect(batches.reduce((sum, [, members]) => sum + members.length, 0)).toBeGreaterThan(150 - 20);
    for (const [workflowId, members] of byWorkflow) {
      if (!workflowId.startsWith('send-batch:')) expect(members).toEqual([workflowId.replace(/^send:/, '')]);
    }
    backlogged = { workspaceId: workspace.workspaceId, ids, carriers: byWorkflow };
  });

  it('MessageIds = "<id>" finds the batch workflow that carried a message (the Temporal UI\'s query, on the dev server)', async () => {
    const batches = [...backlogged.carriers].filter(([workflowId]) => workflowId.startsWith('send-batch:'));
    expect(batches.length).toBeGreaterThan(0);
    for (const [workflowId, members] of batches) {
      for (const messageId of [members[0], members[members.length - 1]]) {
        let found: string[] = [];
        // Visibility is eventually consistent.
        for (const deadline = Date.now() + 20_000; Date.now() < deadline; await new Promise((done) => setTimeout(done, 200))) {
          found = await workflowsFound(`MessageIds = "${messageId}"`);
          if (found.length) break;
        }
        expect(found).toEqual([workflowId]);
      }
    }
    const byWorkspace = await workflowsFound(`WorkspaceId = "${backlogged.workspaceId}" AND Kind = "transactional"`);
    expect(byWorkspace.sort()).toEqual([...backlogged.carriers.keys()].sort());
  });

  it('a batch found by MessageIds and reset to its first workflow task (as from the Temporal UI) sends no second copy', async () => {
    const [messageId] = backlogged.ids;
    const [workflowId] = await workflowsFound(`MessageIds = "${messageId}"`);
    const members = backlogged.carriers.get(workflowId) ?? [];
    expect(members.length).toBeGreaterThan(1);
    const handle = client.workflow.getHandle(workflowId);
    await handle.result();
    const { runId } = await handle.describe();
    const firstTask = ((await handle.fetchHistory()).events ?? []).find((event) => event.workflowTaskCompletedEventAttributes);
    const reset = await client.workflowService.resetWorkflowExecution({
      namespace: stack.api.config.TEMPORAL_NAMESPACE,
      workflowExecution: { workflowId, runId },
      reason: 'test: reset a transactional batch to its first workflow task',
      workflowTaskFinishEventId: firstTask?.eventId,
      requestId: randomUUID(),
    });
    expect(reset.runId).not.toBe(runId);
    // The new run delivers the batch again: every message already has its provider id, so each counts as
    // sent and none reaches the provider.
    expect(await client.workflow.getHandle(workflowId, reset.runId ?? undefined).result()).toEqual({ sent: members.length, failed: 0 });
    const received = stack.sink.received.filter((mail) => mail.recipients[0]?.startsWith('burst-'));
    expect(received).toHaveLength(150);
    expect([...(await sentEvents(members)).values()]).toEqual(members.map(() => 1));
  });

  it("a shallow outbox keeps one send:<id> workflow per message, beside another workspace's backlog", async () => {
    const busy = await sender();
    const quiet = await sender();
    await backlog(busy, 200, 'busy');
    const ids: string[] = [];
    for (const to of ['q1@example.org', 'q2@example.org', 'q3@example.org']) {
      const response = await stack.api.as(quiet.apiKey)('POST', '/emails', { from: quiet.from, to, subject: 'Receipt', text: 'T', idempotencyKey: `quiet-${to}` });
      expect(response.status).toBe(202);
      ids.push((response.body as { id: string }).id);
    }
    for (const id of ids) expect(await stack.waitForStatus(quiet.workspaceId, id, ['sent', 'failed'], 60_000)).toBe('sent');
    const byWorkflow = await carriers(quiet.workspaceId);
    expect([...byWorkflow.keys()].sort()).toEqual(ids.map((id) => `send:${id}`).sort());
    // Meanwhile the busy workspace's backlog went in batches.
    expect([...(await carriers(busy.workspaceId)).keys()].some((workflowId) => workflowId.startsWith('send-batch:'))).toBe(true);
  });

  it('a Temporal that refuses batch starts (a search attribute it does not know) still gets every message, one send:<id> each', async () => {
    // The real server refuses: batch starts are sent with one more attribute, which no namespace has.
    const unknown = defineSearchAttributeKey('BatchingTestNeverRegistered', SearchAttributeType.KEYWORD);
    const realStart = client.workflow.start.bind(client.workflow) as (workflow: unknown, options: { typedSearchAttributes?: SearchAttributePair[] }) => Promise<unknown>;
    const start = ((workflow: unknown, options: { typedSearchAttributes?: SearchAttributePair[] }) =>
      realStart(workflow, workflow === sendBatchWorkflow ? { ...options, typedSearchAttributes: [...(options.typedSearchAttributes ?? []), { key: unknown, value: 'x' }] } : options)
    ) as unknown as WorkflowClient['start'];
    const refusing = Object.assign(Object.create(client) as Client, { workflow: Object.assign(Object.create(client.workflow) as WorkflowClient, { start }) });
    const workspace = await sender();
    await stack.stopDispatcher();
    const ids = await queueMessages(stack.api.db, workspace.workspaceId, { kind: 'transactional', count: 60, from: workspace.from, toPrefix: 'refused' });
    const config = stack.api.config;
    const dispatcher = runDispatcher({ db: stack.api.db, client: refusing, taskQueuePrefix: config.TASK_QUEUE_PREFIX, logger: pino({ level: 'silent' }), channels: dispatcherChannels(config), intervalMs: 50 });
    try {
      for (const id of ids) expect(await stack.waitForStatus(workspace.workspaceId, id, ['sent', 'failed'], 60_000)).toBe('sent');
    } finally {
      await dispatcher.stop();
      stack.startDispatcher();
    }
    expect([...(await carriers(workspace.workspaceId)).keys()].sort()).toEqual(ids.map((id) => `send:${id}`).sort());
  });
});
