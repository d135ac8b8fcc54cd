import { proxyActivities } from '@temporalio/workflow';

/**
 * The shape of a transactional send with nothing of ours in it: one workflow that runs one activity on
 * another task queue. Its completion rate is what a workflow per message allows on a given Temporal
 * server, the ceiling the delivery benchmark sets transactional sends beside.
 */
export async function oneActivityWorkflow(activityQueue: string): Promise<void> {
  const { noop } = proxyActivities<{ noop: () => Promise<void> }>({ taskQueue: activityQueue, startToCloseTimeout: '1 minute' });
  await noop();
}
