/**
 * Task queues. `control` runs the control plane (domain checks, reconcilers, usage rollups, webhook
 * deliveries; later imports), so none of it ever waits behind a send backlog; `default` runs the send workflows and the
 * activities that touch only our own systems; `sends` runs the provider calls, paced per provider.
 */
export const TASK_QUEUES = {
  control: 'control',
  default: 'default',
  sends: 'sends',
} as const;

export type TaskQueue = keyof typeof TASK_QUEUES;

export function taskQueueName(prefix: string, queue: TaskQueue): string {
  return `${prefix}${TASK_QUEUES[queue]}`;
}
