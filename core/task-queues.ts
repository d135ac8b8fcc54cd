/**
 * Task queues. `control` runs the control plane (domain checks, reconcilers, usage rollups, webhook
 * deliveries, the import and analytics workflows), so none of it ever waits behind a send backlog; `default`
 * runs the send workflows and the activities that touch only our own systems; `sends` runs the provider calls,
 * paced per provider; `bulk` runs the long activities of bulk work (import slices, analytics pages) in a few
 * slots of their own, so a burst of imports never takes the control plane's slots.
 */
export const TASK_QUEUES = {
  control: 'control',
  default: 'default',
  sends: 'sends',
  bulk: 'bulk',
} as const;

export type TaskQueue = keyof typeof TASK_QUEUES;

export function taskQueueName(prefix: string, queue: TaskQueue): string {
  return `${prefix}${TASK_QUEUES[queue]}`;
}

/**
 * The queue `to` beside `taskQueue` when that is the `from` queue of some prefix (a workflow on
 * `<prefix>control` finds `<prefix>bulk`); any other queue (a test's single queue) is answered as it is.
 */
export function siblingQueue(taskQueue: string, from: TaskQueue, to: TaskQueue): string {
  return taskQueue.endsWith(TASK_QUEUES[from]) ? `${taskQueue.slice(0, -TASK_QUEUES[from].length)}${TASK_QUEUES[to]}` : taskQueue;
}
