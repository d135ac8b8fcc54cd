import { randomUUID } from 'node:crypto';
import { Worker } from '@temporalio/worker';
import type { Activities } from '../../activities';
import type { BatchDelivery } from '../../activities/delivery';
import { sendBatchWorkflow } from '../../workflows/send-batch';
import { startTimeSkipping, type TimeSkippingEnv } from '../helpers/time-skipping';
import { workflowBundle } from '../../workers/workflow-bundle';

describe('send batch workflow', () => {
  let env: TimeSkippingEnv;
  beforeAll(async () => {
    env = await startTimeSkipping();
  });
  afterAll(() => env.close());

  it('a batch whose provider went down mid-way hands its unsent messages back to the outbox and ends at once: no retry round, none failed', async () => {
    const calls = { deliveries: 0, failed: [] as string[] };
    const fakes = {
      // One sent before the breaker opened; the other two handed back to the outbox without a provider call.
      deliverMessages: async (): Promise<BatchDelivery> => {
        calls.deliveries += 1;
        return { sent: 1, failed: 0, retry: [], requeued: 2 };
      },
      markMessagesFailed: async (_workspaceId: string, messageIds: string[]) => {
        calls.failed.push(...messageIds);
      },
    } satisfies Pick<Activities, 'deliverMessages' | 'markMessagesFailed'>;
    const taskQueue = `${env.taskQueue}-${randomUUID()}`;
    const sendsTaskQueue = `${taskQueue}-sends`;
    const worker = await Worker.create({ connection: env.nativeConnection, taskQueue, workflowBundle: await workflowBundle(), activities: fakes });
    const sends = await Worker.create({ connection: env.nativeConnection, taskQueue: sendsTaskQueue, activities: fakes });
    const outcome = await sends.runUntil(
      worker.runUntil(
        env.workflowClient.execute(sendBatchWorkflow, {
          taskQueue,
          workflowId: `send-batch:${randomUUID()}`,
          args: [{ workspaceId: randomUUID(), messageIds: [randomUUID(), randomUUID(), randomUUID()], sendsTaskQueue }],
        }),
      ),
    );
    expect(outcome).toEqual({ sent: 1, failed: 0 });
    expect(calls).toEqual({ deliveries: 1, failed: [] });
  });
});
