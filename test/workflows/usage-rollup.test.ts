import { randomUUID } from 'node:crypto';
import { Worker } from '@temporalio/worker';
import { periodKey, usagePeriodAt } from '../../core/plans';
import { usageRollupWorkflow } from '../../workflows';
import { startTimeSkipping, type TimeSkippingEnv } from '../helpers/time-skipping';
import { workflowBundle } from '../../workers/workflow-bundle';

const DAY = 24 * 60 * 60 * 1000;
const HOUR = 60 * 60 * 1000;

async function eventually(check: () => boolean): Promise<void> {
  for (let attempt = 0; attempt < 200 && !check(); attempt += 1) await new Promise((resolve) => setTimeout(resolve, 50));
}

describe('usage rollup workflow', () => {
  let env: TimeSkippingEnv;
  beforeAll(async () => {
    env = await startTimeSkipping();
  });
  afterAll(() => env.close());

  it('sleeps through a whole month, closes it once it is over, and moves on to the next month', async () => {
    const closed: string[] = [];
    const worker = await Worker.create({
      connection: env.nativeConnection,
      taskQueue: env.taskQueue,
      workflowBundle: await workflowBundle(),
      activities: {
        closeUsagePeriod: async (periodStart: string) => {
          closed.push(periodStart);
          return { statements: 0 };
        },
      },
    });

    await worker.runUntil(async () => {
      const start = await env.now();
      // The month after the current one: its end is at least 28 days away (over 30 from most dates).
      const month = usagePeriodAt(usagePeriodAt(start).end);
      const workflowId = `usage-rollup-${randomUUID()}`;
      const handle = await env.workflowClient.start(usageRollupWorkflow, {
        workflowId,
        taskQueue: env.taskQueue,
        args: [{ periodStart: periodKey(month) }],
      });

      // An hour before the month ends nothing has been closed yet.
      await env.sleep(month.end.getTime() - start.getTime() - HOUR);
      expect(closed).toEqual([]);

      // Past the end and the settling delay, the month is closed exactly once.
      await env.sleep(2 * HOUR);
      await eventually(() => closed.length > 0);
      expect(closed).toEqual([periodKey(month)]);
      expect((await env.now()).getTime() - start.getTime()).toBeGreaterThanOrEqual(28 * DAY);

      // It continued as new with the following month as its input.
      const next = await env.workflowClient.getHandle(workflowId).describe();
      expect(next.runId).not.toBe(handle.firstExecutionRunId);
      expect(next.status.name).toBe('RUNNING');
      await env.workflowClient.getHandle(workflowId).terminate('test over');
    });
  });
});
