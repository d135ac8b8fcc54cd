import { type NativeConnection, Worker } from '@temporalio/worker';
import type { Activities } from '../activities';
import { taskQueueName } from '../core/task-queues';
import { workerTracing } from './tracing';
import { workflowBundle } from './workflow-bundle';

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
    ...(await workerTracing()),
    connection: options.connection,
    namespace: options.namespace,
    taskQueue: taskQueueName(options.taskQueuePrefix, 'control'),
    workflowBundle: await workflowBundle(),
    activities: options.activities,
  });
}

/** The worker for the `default` queue: the send workflows, and the activities that touch only our systems. */
export async function createDefaultWorker(options: WorkerOptions): Promise<Worker> {
  return Worker.create({
    ...(await workerTracing()),
    connection: options.connection,
    namespace: options.namespace,
    taskQueue: taskQueueName(options.taskQueuePrefix, 'default'),
    workflowBundle: await workflowBundle(),
    activities: options.activities,
  });
}

/**
 * The worker for the `sends` queue: provider calls only. The provider's rate is kept by the shared pacer
 * inside the activities (activities/pacing.ts), which holds over any window across every worker.
 */
export async function createSendsWorker(options: WorkerOptions): Promise<Worker> {
  return Worker.create({
    ...(await workerTracing()),
    connection: options.connection,
    namespace: options.namespace,
    taskQueue: taskQueueName(options.taskQueuePrefix, 'sends'),
    activities: { deliverMessage: options.activities.deliverMessage, deliverMessages: options.activities.deliverMessages },
  });
}

/**
 * The worker for the `bulk` queue: the long activities of bulk work (import slices, analytics sync pages) in
 * `slots` of their own, so many workspaces' imports at once wait their turn here instead of taking the
 * control plane's slots. Their workflows stay on `control`.
 */
export async function createBulkWorker(options: WorkerOptions, slots: number): Promise<Worker> {
  return Worker.create({
    ...(await workerTracing()),
    connection: options.connection,
    namespace: options.namespace,
    taskQueue: taskQueueName(options.taskQueuePrefix, 'bulk'),
    activities: { importSlice: options.activities.importSlice, syncAnalyticsPage: options.activities.syncAnalyticsPage },
    maxConcurrentActivityTaskExecutions: slots,
  });
}
