import { randomUUID } from 'node:crypto';
import { ApplicationFailure } from '@temporalio/activity';
import { Worker } from '@temporalio/worker';
import type { Activities } from '../../activities';
import type { DeliveryOutcome } from '../../activities/delivery';
import { sendMessageWorkflow } from '../../workflows/send-message';
import { startTimeSkipping, type TimeSkippingEnv } from '../helpers/time-skipping';
import { workflowBundle } from '../../workers/workflow-bundle';

interface Calls {
  deliveries: number;
  failed: string[];
}

/** Fake activities, typed against the real ones: delivery (which renders too) follows the script given. */
function activities(calls: Calls, deliver: (attempt: number) => DeliveryOutcome | void) {
  return {
    deliverMessage: async () => {
      calls.deliveries += 1;
      return deliver(calls.deliveries) ?? 'sent';
    },
    markMessageFailed: async (_workspaceId: string, _messageId: string, reason: string) => {
      calls.failed.push(reason);
    },
  } satisfies Pick<Activities, 'deliverMessage' | 'markMessageFailed'>;
}

describe('send message workflow', () => {
  let env: TimeSkippingEnv;
  beforeAll(async () => {
    env = await startTimeSkipping();
  });
  afterAll(() => env.close());

  async function run(deliver: (attempt: number) => DeliveryOutcome | void): Promise<{ outcome: string; calls: Calls }> {
    const calls: Calls = { deliveries: 0, failed: [] };
    const taskQueue = `${env.taskQueue}-${randomUUID()}`;
    const sendsTaskQueue = `${taskQueue}-sends`;
    const fakes = activities(calls, deliver);
    const worker = await Worker.create({
      connection: env.nativeConnection,
      taskQueue,
      workflowBundle: await workflowBundle(),
      activities: fakes,
    });
    const sends = await Worker.create({ connection: env.nativeConnection, taskQueue: sendsTaskQueue, activities: fakes });
    const outcome = await sends.runUntil(
      worker.runUntil(
        env.workflowClient.execute(sendMessageWorkflow, {
          taskQueue,
          workflowId: `send:${randomUUID()}`,
          args: [{ workspaceId: randomUUID(), messageId: randomUUID(), sendsTaskQueue }],
        }),
      ),
    );
    return { outcome, calls };
  }

  it('provider throttling is retried with backoff until the provider accepts', async () => {
    const { outcome, calls } = await run((attempt) => {
      if (attempt < 4) throw Object.assign(new Error('Maximum sending rate exceeded'), { name: 'TooManyRequestsException' });
    });
    expect(outcome).toBe('sent');
    expect(calls).toEqual({ deliveries: 4, failed: [] });
  });

  it('a permanent refusal is not retried and marks the message failed with the reason', async () => {
    const { outcome, calls } = await run(() => {
      throw ApplicationFailure.create({ type: 'PermanentSendError', message: 'SMTP 550: mailbox unavailable' });
    });
    expect(outcome).toBe('failed');
    expect(calls.deliveries).toBe(1);
    expect(calls.failed).toEqual(['SMTP 550: mailbox unavailable']);
  });

  it('a provider that stays down is retried for about a day, then the message fails', async () => {
    const { outcome, calls } = await run(() => {
      throw new Error('connect ECONNREFUSED');
    });
    expect(outcome).toBe('failed');
    expect(calls.deliveries).toBe(60);
    expect(calls.failed).toHaveLength(1);
  });

  it('a render that fails for good (template, variables, budget) ends the message failed with the reason', async () => {
    const { outcome, calls } = await run(() => {
      throw ApplicationFailure.create({ type: 'PermanentSendError', message: 'render: subject is empty' });
    });
    expect(outcome).toBe('failed');
    expect(calls).toEqual({ deliveries: 1, failed: ['render: subject is empty'] });
  });

  it('an attempt that finds the database unreachable is retried until it is back', async () => {
    const { outcome, calls } = await run((attempt) => {
      if (attempt <= 15) throw Object.assign(new Error('connect ECONNREFUSED 127.0.0.1:5432'), { name: 'SequelizeConnectionRefusedError' });
    });
    expect(outcome).toBe('sent');
    expect(calls).toEqual({ deliveries: 16, failed: [] });
  });

  it('a message the delivery handed back to the outbox (provider down, a transient failure) ends the workflow at once: no retry timer, not failed', async () => {
    const { outcome, calls } = await run(() => 'requeued');
    expect(outcome).toBe('skipped');
    expect(calls).toEqual({ deliveries: 1, failed: [] });
  });

  it('a message whose every to recipient was suppressed while it waited ends suppressed, not sent', async () => {
    const { outcome, calls } = await run(() => 'suppressed');
    expect(outcome).toBe('suppressed');
    expect(calls.failed).toEqual([]);
  });
});
