import { type NativeConnection, Worker } from '@temporalio/worker';
import type { Activities } from '../activities';
import { taskQueueName } from './task-queues';

export interface WorkerOptions {
  connection: NativeConnection;
  namespace: string;
  taskQueuePrefix: string;
  activities: Activities;
}

/** The worker for the `default` queue: every workflow, and the activities that touch only our systems. */
export async function createDefaultWorker(options: WorkerOptions): Promise<Worker> {
  return Worker.create({
    connection: options.connection,
    namespace: options.namespace,
    taskQueue: taskQueueName(options.taskQueuePrefix, 'default'),
    workflowsPath: require.resolve('../workflows'),
    activities: options.activities,
  });
}
