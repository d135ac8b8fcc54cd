import { randomUUID } from 'node:crypto';
import { Worker } from '@temporalio/worker';
import type { Activities } from '../../activities';
import type { ReconcileOptions, ReconcileReport } from '../../activities/reconciler';
import { messageReconcilerWorkflow } from '../../workflows';
import { startTimeSkipping, type TimeSkippingEnv } from '../helpers/time-skipping';
import { workflowBundle } from '../../workers/workflow-bundle';

const MINUTE = 60_000;

describe('message reconciler workflow', () => {
  let env: TimeSkippingEnv;
  beforeAll(async () => {
    env = await startTimeSkipping();
  });
  afterAll(() => env.close());

  it('runs a round every interval, goes again at once after a full round, sweeps parked events and campaigns, and keeps running', async () => {
    const rounds: number[] = [];
    const sweeps: number[] = [];
    const campaignRounds: number[] = [];
    // The second round is full (a backlog of repairs): the third follows without waiting.
    const reports: Array<Partial<ReconcileReport>> = [{ checked: 3 }, { checked: 10 }, { checked: 0 }];
    const fakes = {
      reconcileMessages: async (options: ReconcileOptions): Promise<ReconcileReport> => {
        rounds.push((await env.now()).getTime());
        const report = reports.shift() ?? { checked: 0 };
        return { checked: Math.min(report.checked ?? 0, options.limit), running: 0, failed: 0, redispatched: 0 };
      },
      reconcileCampaigns: async () => {
        campaignRounds.push((await env.now()).getTime());
        return { checked: 0, restarted: 0 };
      },
      matchParkedProviderEvents: async () => {
        sweeps.push((await env.now()).getTime());
        return { recorded: 0, expired: 0 };
      },
    } satisfies Pick<Activities, 'reconcileMessages' | 'reconcileCampaigns' | 'matchParkedProviderEvents'>;
    const worker = await Worker.create({
      connection: env.nativeConnection,
      taskQueue: env.taskQueue,
      workflowBundle: await workflowBundle(),
      activities: fakes,
    });
    await worker.runUntil(async () => {
      const handle = await env.workflowClient.start(messageReconcilerWorkflow, {
        taskQueue: env.taskQueue,
        workflowId: `message-reconciler-${randomUUID()}`,
        args: [{ intervalMs: MINUTE, round: { staleAfterMs: 10 * MINUTE, limit: 10, recheckAfterMs: 15 * MINUTE } }],
      });
      await env.sleep(3 * MINUTE + 1_000);
      // A round's sweeps follow its reconcile activity: on a loaded machine the last round's may still be running.
      const settled = () => rounds.length >= 5 && sweeps.length === rounds.length && campaignRounds.length === rounds.length;
      for (let attempt = 0; attempt < 200 && !settled(); attempt += 1) await new Promise((resolve) => setTimeout(resolve, 50));
      expect(rounds.length).toBeGreaterThanOrEqual(4);
      const gaps = rounds.slice(1, 4).map((at, index) => at - rounds[index]);
      expect(gaps[0]).toBeGreaterThanOrEqual(MINUTE);
      expect(gaps[1]).toBeLessThan(MINUTE);
      expect(gaps[2]).toBeGreaterThanOrEqual(MINUTE);
      expect(sweeps.length).toBe(rounds.length);
      expect(campaignRounds.length).toBe(rounds.length);
      expect((await handle.describe()).status.name).toBe('RUNNING');
      await handle.terminate();
    });
  });
});
