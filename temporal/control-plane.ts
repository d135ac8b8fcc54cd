import type { Client, WorkflowStartOptions } from '@temporalio/client';
import { TEMPORAL_PRIORITY } from '../core/dispatch';
import { DOMAIN_WATCHDOG_WORKFLOW_ID, JOURNEY_SWEEPER_WORKFLOW_ID, MESSAGE_RECONCILER_WORKFLOW_ID, USAGE_ROLLUP_WORKFLOW_ID } from '../core/ids';
import { taskQueueName } from '../core/task-queues';
import { domainWatchdogWorkflow } from '../workflows/domain-watchdog';
import { journeySweeperWorkflow } from '../workflows/journey-sweeper';
import { messageReconcilerWorkflow, type MessageReconcilerInput } from '../workflows/message-reconciler';
import { usageRollupWorkflow } from '../workflows/usage-rollup';
import { searchAttributes } from './search-attributes';
import { startOnce } from './start-once';

/** Where control-plane work runs: its own queue, first in priority, fair between workspaces. */
export function controlPlaneStart(taskQueuePrefix: string, workspaceId?: string): Pick<WorkflowStartOptions, 'taskQueue' | 'priority' | 'typedSearchAttributes'> {
  return {
    taskQueue: taskQueueName(taskQueuePrefix, 'control'),
    priority: { priorityKey: TEMPORAL_PRIORITY.control, ...(workspaceId && { fairnessKey: workspaceId }) },
    typedSearchAttributes: searchAttributes({ WorkspaceId: workspaceId }),
  };
}

/**
 * The deployment-wide control-plane workflows that must always run; starting one that runs is a no-op.
 * Their ids carry the task-queue prefix, so deployments sharing one Temporal namespace do not share them.
 */
export async function startSingletons(client: Client, taskQueuePrefix: string, reconciler: MessageReconcilerInput): Promise<void> {
  const control = controlPlaneStart(taskQueuePrefix);
  await startOnce(() => client.workflow.start(usageRollupWorkflow, { ...control, workflowId: `${taskQueuePrefix}${USAGE_ROLLUP_WORKFLOW_ID}`, args: [{}] }));
  await startOnce(() => client.workflow.start(domainWatchdogWorkflow, { ...control, workflowId: `${taskQueuePrefix}${DOMAIN_WATCHDOG_WORKFLOW_ID}` }));
  await startOnce(() =>
    client.workflow.start(messageReconcilerWorkflow, { ...control, workflowId: `${taskQueuePrefix}${MESSAGE_RECONCILER_WORKFLOW_ID}`, args: [reconciler] }),
  );
  await startOnce(() => client.workflow.start(journeySweeperWorkflow, { ...control, workflowId: `${taskQueuePrefix}${JOURNEY_SWEEPER_WORKFLOW_ID}`, args: [{}] }));
}
