import { randomUUID } from 'node:crypto';
import type { Client } from '@temporalio/client';
import { connectTemporal } from '../../temporal/connection';
import { QueryTypes } from 'sequelize';
import { sendWorkflowId } from '../../core/ids';
import { startEmailStack, type EmailStack } from '../helpers/email-stack';
import { createTestWorkspace } from '../helpers/workspaces';

let stack: EmailStack;
let client: Client;
beforeAll(async () => {
  stack = await startEmailStack();
  client = await connectTemporal(stack.api.config);
});
afterAll(async () => {
  await client.connection.close();
  await stack.close();
});

describe('a send workflow reset after it sent (as from the Temporal UI)', () => {
  it('runs again from its first workflow task without sending a second copy', async () => {
    const { apiKey, workspaceId, domain } = await createTestWorkspace(stack.api, { domain: true });
    const accepted = await stack.api.call('POST', '/api/v1/emails', {
      key: apiKey,
      body: { from: `a@${domain}`, to: 'reset@example.org', subject: 'Once', text: 'T', idempotencyKey: `reset-${randomUUID()}` },
    });
    const id = (accepted.body as { id: string }).id;
    await stack.waitForStatus(workspaceId, id, ['sent']);
    const handle = client.workflow.getHandle(sendWorkflowId(id));
    await handle.result();

    const { events } = await handle.fetchHistory();
    const firstTask = (events ?? []).find((event) => event.workflowTaskCompletedEventAttributes);
    const { runId: firstRunId } = await handle.describe();
    const reset = await client.workflowService.resetWorkflowExecution({
      namespace: stack.api.config.TEMPORAL_NAMESPACE,
      workflowExecution: { workflowId: sendWorkflowId(id), runId: firstRunId },
      reason: 'test: reset to the first workflow task',
      workflowTaskFinishEventId: firstTask?.eventId,
      requestId: randomUUID(),
    });
    expect(reset.runId).toBeTruthy();
    expect(reset.runId).not.toBe(firstRunId);
    // The new run renders and delivers again; both activities see the provider id and do nothing.
    await client.workflow.getHandle(sendWorkflowId(id), reset.runId ?? undefined).result();

    expect(stack.sink.received.filter((mail) => mail.recipients.includes('reset@example.org'))).toHaveLength(1);
    const timeline = await stack.api.db.query<{ type: string }>('SELECT type FROM message_events WHERE message_id = $1', {
      bind: [id],
      type: QueryTypes.SELECT,
    });
    expect(timeline.map((event) => event.type)).toEqual(['sent']);
  });
});
