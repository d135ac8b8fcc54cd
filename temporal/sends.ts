import type { Client } from '@temporalio/client';
import { dispatchWorkflowId } from '../core/breaker';
import { type DispatchedMessage, temporalPriorityOf } from '../core/dispatch';
import { sendBatchWorkflowId, sendWorkflowId } from '../core/ids';
import { taskQueueName } from '../core/task-queues';
import { sendBatchWorkflow } from '../workflows/send-batch';
import { sendMessageWorkflow } from '../workflows/send-message';
import { searchAttributes } from './search-attributes';
import { startOnce } from './start-once';

/**
 * The send workflow of one transactional message, `send:<messageId>`, which operators inspect and retry in
 * the Temporal UI. The id rejects a second start, so two dispatchers can never run one message twice. A
 * message handed back to the outbox (its provider down, a transient failure) gets `send:<messageId>:<n>`
 * on its n-th dispatch (core/breaker.ts); the row's workflow_id names the current one.
 */
export async function startSendWorkflow(client: Client, taskQueuePrefix: string, message: DispatchedMessage): Promise<string> {
  const workflowId = dispatchWorkflowId(sendWorkflowId(message.messageId), message.round);
  await startOnce(() =>
    client.workflow.start(sendMessageWorkflow, {
      workflowId,
      taskQueue: taskQueueName(taskQueuePrefix, 'default'),
      args: [{ workspaceId: message.workspaceId, messageId: message.messageId, sendsTaskQueue: taskQueueName(taskQueuePrefix, 'sends') }],
      workflowIdReusePolicy: 'REJECT_DUPLICATE',
      priority: { priorityKey: temporalPriorityOf(message.kind), fairnessKey: message.workspaceId },
      typedSearchAttributes: searchAttributes({
        WorkspaceId: message.workspaceId,
        MessageId: message.messageId,
        Kind: message.kind,
        Channel: message.channel,
        ContactId: message.contactId,
        CampaignId: message.campaignId,
        EnrollmentId: message.enrollmentId,
      }),
    }),
  );
  return workflowId;
}

/**
 * One batch of messages of one workspace and kind: bulk ones (a campaign's or a journey's), or transactional
 * ones of a backlogged workspace (adaptive batching, docs/delivery.md): one workflow and one delivery
 * activity call for the whole batch, each message still claimed and recorded on its own. A transactional
 * batch names its messages in `MessageIds` (at most TRANSACTIONAL_BATCH_SIZE, within Temporal's 2 KB per
 * value), so an operator looking for a receipt finds the batch that carried it; a bulk batch of up to
 * 1,000 would not fit, and its messages are found by CampaignId or EnrollmentId.
 */
export async function startSendBatchWorkflow(client: Client, taskQueuePrefix: string, batch: DispatchedMessage[]): Promise<string> {
  const [first] = batch;
  const workflowId = dispatchWorkflowId(sendBatchWorkflowId(first.messageId), first.round);
  await startOnce(() =>
    client.workflow.start(sendBatchWorkflow, {
      workflowId,
      taskQueue: taskQueueName(taskQueuePrefix, 'default'),
      args: [{ workspaceId: first.workspaceId, messageIds: batch.map((message) => message.messageId), sendsTaskQueue: taskQueueName(taskQueuePrefix, 'sends') }],
      workflowIdReusePolicy: 'REJECT_DUPLICATE',
      priority: { priorityKey: temporalPriorityOf(first.kind), fairnessKey: first.workspaceId },
      typedSearchAttributes: searchAttributes({
        WorkspaceId: first.workspaceId,
        Kind: first.kind,
        Channel: first.channel,
        CampaignId: first.campaignId,
        EnrollmentId: first.enrollmentId,
      }, first.kind === 'transactional' ? batch.map((message) => message.messageId) : undefined),
    }),
  );
  return workflowId;
}
