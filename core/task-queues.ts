/**
 * Task queues. `default` runs every workflow and the activities that touch only our own systems;
 * `sends` runs the provider calls, under a server-side rate limit shared by all workers.
 */
export const TASK_QUEUES = {
  default: 'default',
  sends: 'sends',
} as const;

export type TaskQueue = keyof typeof TASK_QUEUES;

export function taskQueueName(prefix: string, queue: TaskQueue): string {
  return `${prefix}${TASK_QUEUES[queue]}`;
}
