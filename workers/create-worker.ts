import { type NativeConnection, Worker } from '@temporalio/worker';
import type { Activities } from '../activities';
import { taskQueueName } from '../core/task-queues';

export interface WorkerOptions {
  connection: NativeConnection;
  namespace: string;
  taskQueuePrefix: string;
  activities: Activities;
}

/**
 * The worker for the `control` queue: the control plane (domain checks, reconciler, usage rollup, webhooks), which
 * never waits behind sends. Same workflows and activities; its own queue and pollers.
 */
export async function createControlWorker(options: WorkerOptions): Promise<Worker> {
  return Worker.create({
    connection: options.connection,
    namespace: options.namespace,
    taskQueue: taskQueueName(options.taskQueuePrefix, 'control'),
    workflowsPath: require.resolve('../workflows'),
    activities: options.activities,
  });
}

/** The worker for the `default` queue: the send workflows, and the activities that touch only our systems. */
export async function createDefaultWorker(options: WorkerOptions): Promise<Worker> {
  return Worker.create({
    connection: options.connection,
    namespace: options.namespace,
    taskQueue: taskQueueName(options.taskQueuePrefix, 'default'),
    workflowsPath: require.resolve('../workflows'),
    activities: options.activities,
  });
}

/**
 * The worker for the `sends` queue: provider calls only. The provider's rate is kept by the shared pacer
 * inside the activities (activities/pacing.ts), which holds over any window across every worker.
 */
export async function createSendsWorker(options: WorkerOptions): Promise<Worker> {
  return Worker.create({
    connection: options.connection,
    namespace: options.namespace,
    taskQueue: taskQueueName(options.taskQueuePrefix, 'sends'),
    activities: { deliverMessage: options.activities.deliverMessage, deliverMessages: options.activities.deliverMessages },
  });
}
