import type { Client } from '@temporalio/client';
import { TEMPORAL_PRIORITY } from '../core/dispatch';
import { bounceMailWorkflowId, inboundMailWorkflowId } from '../core/ids';
import { taskQueueName } from '../core/task-queues';
import { bounceMailWorkflow } from '../workflows/bounce-mail';
import { inboundMailWorkflow } from '../workflows/inbound-mail';
import { searchAttributes } from './search-attributes';
import { startOnce } from './start-once';

/**
 * The inbound-mail workflow of one accepted message, `inbound:<inboxMessageId>`. It runs on the control
 * queue rather than the default one that carries the send workflows, so a flood of mail to one inbox never
 * waits behind a campaign nor delays anyone's sends; at transactional priority, below the control plane's own
 * (domain checks and webhooks still go first); with the workspace as fairness key, so one workspace's flood
 * takes turns with other workspaces' mail. Its work is a parse and a few statements, as short as the control
 * plane's.
 */
export async function startInboundMailWorkflow(client: Client, taskQueuePrefix: string, message: { workspaceId: string; inboxMessageId: string }): Promise<string> {
  const workflowId = inboundMailWorkflowId(message.inboxMessageId);
  await startOnce(() =>
    client.workflow.start(inboundMailWorkflow, {
      workflowId,
      taskQueue: taskQueueName(taskQueuePrefix, 'control'),
      args: [{ workspaceId: message.workspaceId, inboxMessageId: message.inboxMessageId }],
      workflowIdReusePolicy: 'REJECT_DUPLICATE',
      priority: { priorityKey: TEMPORAL_PRIORITY.transactional, fairnessKey: message.workspaceId },
      typedSearchAttributes: searchAttributes({ WorkspaceId: message.workspaceId, Channel: 'email', Kind: 'inbound' }),
    }),
  );
  return workflowId;
}

/** What the bounce-mail workflow is started with (the report's digest and where its raw mail is stored). */
export type BounceMailStart = Parameters<typeof bounceMailWorkflow>[0];

/**
 * The bounce-mail workflow of one report mail that reached a VERP return path (`bounce:<digest>`), started
 * by the MX before it answers 250, so an accepted report is never lost (a failed start answers 451 and the
 * sender retries; its retry has the same digest, so it is one workflow). On the control queue at
 * transactional priority, like inbound mail: a bounce must suppress an address before the next send to it.
 */
export async function startBounceMailWorkflow(client: Client, taskQueuePrefix: string, input: BounceMailStart): Promise<string> {
  const workflowId = bounceMailWorkflowId(input.digest);
  await startOnce(() =>
    client.workflow.start(bounceMailWorkflow, {
      workflowId,
      taskQueue: taskQueueName(taskQueuePrefix, 'control'),
      args: [input],
      workflowIdReusePolicy: 'REJECT_DUPLICATE',
      priority: { priorityKey: TEMPORAL_PRIORITY.transactional },
      typedSearchAttributes: searchAttributes({ Channel: 'email', Kind: 'bounce' }),
    }),
  );
  return workflowId;
}
