import { type ChildProcess, spawn } from 'node:child_process';
import { resolve } from 'node:path';
import { QueryTypes } from 'sequelize';
import { startEmailStack, type EmailStack } from '../helpers/email-stack';
import { addTestDomain, createTestWorkspace } from '../helpers/workspaces';
import { queueMessages } from '../helpers/factories';

let stack: EmailStack;
beforeAll(async () => {
  stack = await startEmailStack();
  // This file runs the worker as a real process, so it can be killed.
  await stack.stopWorkers();
});
afterAll(() => stack.close());

function startWorkerProcess(): ChildProcess {
  const root = resolve(__dirname, '../..');
  return spawn(resolve(root, 'node_modules/.bin/tsx'), ['workers/main.ts'], {
    cwd: root,
    env: {
      ...process.env,
      TASK_QUEUE_PREFIX: stack.api.config.TASK_QUEUE_PREFIX,
      SMTP_URL: stack.sink.url,
      EMAIL_PROVIDER: 'smtp',
      LOG_LEVEL: 'silent',
      DATABASE_URL: stack.api.config.DATABASE_URL,
      // Several of these run in a row, and beside other test files.
      WORKER_METRICS_PORT: '0',
      // Slow enough that a batch is still going when the worker is killed.
      SEND_RATE_PER_SECOND: '10',
      // The run's bundle (test/jest-global-setup.ts): each worker process would otherwise run webpack at start.
      ...(process.env.TEST_WORKFLOW_BUNDLE && { WORKFLOW_BUNDLE_PATH: process.env.TEST_WORKFLOW_BUNDLE }),
    },
    stdio: 'ignore',
    // Its own process group: tsx runs the worker in a child process, and a kill must reach that one.
    detached: true,
  });
}

async function kill(worker: ChildProcess, signal: NodeJS.Signals): Promise<void> {
  const exited = new Promise((done) => worker.once('exit', done));
  process.kill(-(worker.pid as number), signal);
  await exited;
  // The group's other members (the real worker under tsx) must be gone too before the test goes on.
  for (let attempt = 0; attempt < 100; attempt += 1) {
    try {
      process.kill(-(worker.pid as number), 0);
    } catch {
      return;
    }
    await new Promise((done) => setTimeout(done, 100));
  }
  throw new Error('the worker process group is still alive');
}

jest.setTimeout(180_000);

describe('a worker killed in the middle of a send', () => {
  it('the message still ends sent, delivered once, by the next worker', async () => {
    const { apiKey, workspaceId, domain } = await createTestWorkspace(stack.api, { domain: true });
    const held = stack.sink.holdNext();
    const first = startWorkerProcess();

    const accepted = await stack.api.call('POST', '/api/v1/emails', {
      key: apiKey,
      body: { from: `a@${domain}`, to: 'crash@example.org', subject: 'Survives', text: 'T', idempotencyKey: `fault-${Date.now()}` },
    });
    expect(accepted.status).toBe(202);
    const id = (accepted.body as { id: string }).id;

    // The provider has the bytes but has not answered: kill the worker right there.
    await held.arrived;
    await kill(first, 'SIGKILL');
    expect(await stack.waitForStatus(workspaceId, id, ['sending', 'queued'])).toBe('sending');

    const second = startWorkerProcess();
    try {
      // A new worker process starts, the dead attempt's heartbeat times out (10 s), and the retry sends.
      expect(await stack.waitForStatus(workspaceId, id, ['sent', 'failed'], 120_000)).toBe('sent');
    } finally {
      await kill(second, 'SIGTERM');
    }
    expect(stack.sink.received.filter((mail) => mail.recipients.includes('crash@example.org'))).toHaveLength(1);
    const status = await stack.api.call('GET', `/api/v1/emails/${id}`, { key: apiKey });
    expect((status.body as { events: Array<{ type: string }> }).events.map((event) => event.type)).toEqual(['sent']);
  });
});

describe('a worker killed in the middle of a batch', () => {
  it('the next worker finishes the batch, and no message reaches the provider twice', async () => {
    const { workspaceId } = await createTestWorkspace(stack.api, { plan: 'pro' });
    const from = `a@${(await addTestDomain(stack, workspaceId)).domain}`;
    const ids = await queueMessages(stack.api.db, workspaceId, { kind: 'campaign', count: 40, from, toPrefix: 'killed-batch' });
    const ours = () => stack.sink.received.filter((mail) => mail.recipients[0]?.startsWith('killed-batch-'));
    const first = startWorkerProcess();
    for (const deadline = Date.now() + 60_000; ours().length < 10 && Date.now() < deadline; ) await new Promise((done) => setTimeout(done, 50));
    // The provider has the next message's bytes but has not answered: the worker dies right there.
    const held = stack.sink.holdNext();
    await held.arrived;
    await kill(first, 'SIGKILL');
    const before = ours().length;
    expect(before).toBeGreaterThanOrEqual(10);
    expect(before).toBeLessThan(ids.length);

    const second = startWorkerProcess();
    try {
      for (const id of ids) await stack.waitForStatus(workspaceId, id, ['sent', 'failed'], 120_000);
    } finally {
      await kill(second, 'SIGTERM');
    }
    const recipients = ours().map((mail) => mail.recipients[0]);
    expect(recipients).toHaveLength(ids.length);
    expect(new Set(recipients).size).toBe(ids.length);
  });
});

describe('a worker killed in the middle of a transactional batch (adaptive batching, docs/delivery.md)', () => {
  it('the next worker finishes it: every message sent once, with one sent event, and each found in its batch', async () => {
    const { workspaceId } = await createTestWorkspace(stack.api, { plan: 'pro' });
    const from = `a@${(await addTestDomain(stack, workspaceId)).domain}`;
    // 40 waiting is a backlog (SEND_BATCH_THRESHOLD is 20): they travel in batch workflows, not send:<id>.
    const ids = await queueMessages(stack.api.db, workspaceId, { kind: 'transactional', count: 40, from, toPrefix: 'killed-receipts' });
    const ours = () => stack.sink.received.filter((mail) => mail.recipients[0]?.startsWith('killed-receipts-'));
    const first = startWorkerProcess();
    for (const deadline = Date.now() + 60_000; ours().length < 10 && Date.now() < deadline; ) await new Promise((done) => setTimeout(done, 50));
    // The provider has the next receipt's bytes but has not answered: the worker dies right there.
    const held = stack.sink.holdNext();
    await held.arrived;
    await kill(first, 'SIGKILL');
    const before = ours().length;
    expect(before).toBeGreaterThanOrEqual(10);
    expect(before).toBeLessThan(ids.length);

    const second = startWorkerProcess();
    try {
      for (const id of ids) expect(await stack.waitForStatus(workspaceId, id, ['sent', 'failed'], 120_000)).toBe('sent');
    } finally {
      await kill(second, 'SIGTERM');
    }
    const recipients = ours().map((mail) => mail.recipients[0]);
    expect(recipients).toHaveLength(ids.length);
    expect(new Set(recipients).size).toBe(ids.length);
    const rows = await stack.api.db.query<{ workflow_id: string; sent: string }>(
      `SELECT m.workflow_id, (SELECT count(*) FROM message_events e WHERE e.message_id = m.id AND e.type = 'sent') AS sent
       FROM messages m WHERE m.workspace_id = $1`,
      { bind: [workspaceId], type: QueryTypes.SELECT },
    );
    expect(rows.map((row) => Number(row.sent))).toEqual(ids.map(() => 1));
    expect(rows.some((row) => row.workflow_id.startsWith('send-batch:'))).toBe(true);
  });
});
