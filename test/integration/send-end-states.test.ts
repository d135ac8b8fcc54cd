import type { Client } from '@temporalio/client';
import { connectTemporal } from '../../temporal/connection';
import { pino } from 'pino';
import { QueryTypes } from 'sequelize';
import { createReconcilerActivities } from '../../activities/reconciler';
import { createSendObserver } from '../../activities/send-observer';
import { sendWorkflowId } from '../../core/ids';
import { addSuppression } from '../../db/repositories/suppressions';
import { startEmailStack, type EmailStack } from '../helpers/email-stack';
import { createTestWorkspace } from '../helpers/workspaces';
import { temporalPorts } from '../../temporal/activity-ports';

// Every accepted message ends in a known state. The stack's database is this file's own: the reconciler
// looks at every unfinished message it finds.
let stack: EmailStack;
let temporal: Client;
beforeAll(async () => {
  stack = await startEmailStack();
  temporal = await connectTemporal(stack.api.config);
});
afterAll(async () => {
  await stack.close();
  await temporal.connection.close();
});

jest.setTimeout(60_000);

async function sender() {
  const workspace = await createTestWorkspace(stack.api, { domain: true });
  const { domain } = workspace;
  return { ...workspace, domain };
}

async function used(call: ReturnType<typeof stack.api.as>): Promise<number> {
  return ((await call('GET', '/usage')).body as { messages: { used: number } }).messages.used;
}

async function timeline(call: ReturnType<typeof stack.api.as>, id: string) {
  const body = (await call('GET', `/emails/${id}`)).body as { status: string; events: Array<{ type: string }> };
  return { status: body.status, types: body.events.map((event) => event.type) };
}

async function failedReason(messageId: string): Promise<string | null> {
  const rows = await stack.api.db.query<{ reason: string | null }>("SELECT reason FROM message_events WHERE message_id = $1 AND type = 'failed'", {
    bind: [messageId],
    type: QueryTypes.SELECT,
  });
  return rows[0]?.reason ?? null;
}

/** The dispatcher starts the workflow in the background: wait until the message is marked dispatched. */
async function dispatched(messageId: string): Promise<void> {
  for (let tries = 0; tries < 100; tries += 1) {
    const rows = await stack.api.db.query('SELECT 1 FROM messages WHERE id = $1 AND dispatched_at IS NOT NULL', { bind: [messageId], type: QueryTypes.SELECT });
    if (rows.length) return;
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  throw new Error(`message ${messageId} was never dispatched`);
}

describe('a send that can never render', () => {
  it('a template without a subject, used without a subject, is refused with 422 and costs nothing', async () => {
    const { domain, call } = await sender();
    const template = await call('POST', '/templates', { name: 'no-subject', format: 'html', body: '<p>Hi</p>' });
    expect(template.status).toBe(201);
    const send = await call('POST', '/emails', {
      from: `a@${domain}`, to: 'x@example.org', templateId: (template.body as { id: string }).id, idempotencyKey: 'no-subject-1',
    });
    expect(send.status).toBe(422);
    expect(send.body).toEqual({ error: { formErrors: [], fieldErrors: { subject: [expect.stringContaining('has no subject')] } } });
    expect(await used(call)).toBe(0);
  });
});

describe('a render that fails after acceptance', () => {
  it('ends the message failed, with a failed event naming the reason and its quota given back', async () => {
    const { workspaceId, domain, call } = await sender();
    const template = await call('POST', '/templates', { name: 'empty-subject', format: 'html', subject: '{{ title }}', body: '<p>Hi</p>' });
    const send = await call('POST', '/emails', {
      from: `a@${domain}`, to: 'x@example.org', cc: 'y@example.org', templateId: (template.body as { id: string }).id, idempotencyKey: 'empty-subject-1',
    });
    expect(send.status).toBe(202);
    const id = (send.body as { id: string }).id;
    expect(await stack.waitForStatus(workspaceId, id, ['failed', 'sent'])).toBe('failed');
    expect(await timeline(call, id)).toEqual({ status: 'failed', types: ['failed'] });
    expect(await failedReason(id)).toMatch(/subject/);
    expect(await used(call)).toBe(0);
  });
});

describe('recipients suppressed while the message waited', () => {
  it('a suppressed cc is left out of the mail and its unit given back; the to still receives it', async () => {
    const { workspaceId, domain, call } = await sender();
    await stack.stopWorkers();
    const send = await call('POST', '/emails', { from: `a@${domain}`, to: 'keep@example.org', cc: 'Gone <gone@example.org>', subject: 'S', text: 'T', idempotencyKey: 'late-cc-1' });
    const id = (send.body as { id: string }).id;
    expect(await used(call)).toBe(2);
    await addSuppression(stack.api.db, workspaceId, { channel: 'email', address: 'gone@example.org', reason: 'hard_bounce' });
    await stack.startWorkers();
    await stack.waitForStatus(workspaceId, id, ['sent']);
    const mails = stack.sink.received.filter((mail) => mail.recipients.includes('keep@example.org'));
    expect(mails.map((mail) => mail.recipients)).toEqual([['keep@example.org']]);
    expect(mails[0].raw).not.toContain('gone@example.org');
    expect(await used(call)).toBe(1);
  });

  it('when every to recipient was suppressed the message is not mailed and ends failed, saying why', async () => {
    const { workspaceId, domain, call } = await sender();
    await stack.stopWorkers();
    const send = await call('POST', '/emails', { from: `a@${domain}`, to: 'left@example.org', subject: 'S', text: 'T', idempotencyKey: 'late-to-1' });
    const id = (send.body as { id: string }).id;
    await addSuppression(stack.api.db, workspaceId, { channel: 'email', address: 'left@example.org', reason: 'unsubscribed' });
    await stack.startWorkers();
    expect(await stack.waitForStatus(workspaceId, id, ['failed', 'sent'])).toBe('failed');
    expect(await failedReason(id)).toMatch(/^suppressed/);
    expect(stack.sink.received.some((mail) => mail.recipients.includes('left@example.org'))).toBe(false);
    expect(await used(call)).toBe(0);
  });
});

describe('the reconciler', () => {
  const reconciler = () => createReconcilerActivities({ db: stack.api.db, ...temporalPorts(temporal, stack.api.config.TASK_QUEUE_PREFIX), observer: createSendObserver(pino({ level: 'silent' })) });

  it('a message whose workflow was terminated from the Temporal UI ends failed, its quota given back', async () => {
    const { domain, call } = await sender();
    await stack.stopWorkers();
    const send = await call('POST', '/emails', { from: `a@${domain}`, to: 'term@example.org', subject: 'S', text: 'T', idempotencyKey: 'terminated-1' });
    const id = (send.body as { id: string }).id;
    await dispatched(id);
    await temporal.workflow.getHandle(sendWorkflowId(id)).terminate('operator stopped it');

    const report = await reconciler().reconcileMessages({ staleAfterMs: 0, limit: 100, recheckAfterMs: 60_000 });
    expect(report.failed).toBe(1);
    expect(await timeline(call, id)).toEqual({ status: 'failed', types: ['failed'] });
    expect(await failedReason(id)).toBe('the send workflow ended terminated before the message was sent');
    expect(await used(call)).toBe(0);
    await stack.startWorkers();
  });

  it('a dispatched message whose workflow history is gone goes back to the outbox; a running one is left alone', async () => {
    const { workspaceId, domain, call } = await sender();
    await stack.stopWorkers();
    const accept = async (key: string) => {
      const response = await call('POST', '/emails', { from: `a@${domain}`, to: `${key}@example.org`, subject: 'S', text: 'T', idempotencyKey: `reconcile-${key}` });
      const id = (response.body as { id: string }).id;
      await dispatched(id);
      return id;
    };
    const lostId = await accept('lost');
    const runningId = await accept('running');
    await temporal.workflowService.deleteWorkflowExecution({ namespace: 'default', workflowExecution: { workflowId: sendWorkflowId(lostId) } });
    for (let tries = 0; tries < 100; tries += 1) {
      const gone = await temporal.workflow.getHandle(sendWorkflowId(lostId)).describe().then(() => false, () => true);
      if (gone) break;
      await new Promise((resolve) => setTimeout(resolve, 100));
    }

    const report = await reconciler().reconcileMessages({ staleAfterMs: 0, limit: 100, recheckAfterMs: 60_000 });
    expect(report).toMatchObject({ redispatched: 1, failed: 0 });
    const rows = await stack.api.db.query<{ id: string; status: string; dispatched: boolean; postponed: boolean }>(
      'SELECT id, status, dispatched_at IS NOT NULL AS dispatched, coalesce(reconcile_after > now(), false) AS postponed FROM messages WHERE workspace_id = $1',
      { bind: [workspaceId], type: QueryTypes.SELECT },
    );
    const byId = new Map(rows.map((row) => [row.id, row]));
    expect(byId.get(lostId)).toMatchObject({ status: 'queued', dispatched: false });
    expect(byId.get(runningId)).toMatchObject({ status: 'queued', dispatched: true, postponed: true });
    // Looked at again only after recheckAfterMs.
    expect((await reconciler().reconcileMessages({ staleAfterMs: 0, limit: 100, recheckAfterMs: 60_000 })).checked).toBe(0);
    await stack.startWorkers();
  });
});
