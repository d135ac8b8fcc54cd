import type { Client } from '@temporalio/client';
import { WorkflowNotFoundError } from '@temporalio/common';
import { TEMPORAL_PRIORITY } from '../core/dispatch';
import { importWorkflowId } from '../core/ids';
import { cancelImportSignal, importWorkflow } from '../workflows/import';
import { controlPlaneStart } from './control-plane';
import { startOnce } from './start-once';

/**
 * A contact import's workflow, `import:<importId>`, on the control queue with the workspace as fairness key,
 * at the lowest priority there (below domain checks, webhooks and inbound mail, which are short and someone
 * waits for them): one workspace's million-row file takes turns with other workspaces' imports and never
 * waits behind, nor delays, anyone's sends.
 */
export async function startImportWorkflow(client: Client, taskQueuePrefix: string, job: { workspaceId: string; importId: string }): Promise<void> {
  await startOnce(() =>
    client.workflow.start(importWorkflow, {
      ...controlPlaneStart(taskQueuePrefix, job.workspaceId),
      priority: { priorityKey: TEMPORAL_PRIORITY.campaign, fairnessKey: job.workspaceId },
      workflowId: importWorkflowId(job.importId),
      args: [{ workspaceId: job.workspaceId, importId: job.importId }],
      workflowIdReusePolicy: 'REJECT_DUPLICATE',
    }),
  );
}

/** Tells an import's workflow that the job was canceled; a workflow already closed needs nothing. */
export async function signalImportCanceled(client: Client, importId: string): Promise<void> {
  try {
    await client.workflow.getHandle(importWorkflowId(importId)).signal(cancelImportSignal);
  } catch (error) {
    if (!(error instanceof WorkflowNotFoundError)) throw error;
  }
}
