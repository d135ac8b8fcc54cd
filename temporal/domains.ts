import type { Client } from '@temporalio/client';
import { domainCheckWorkflowId, domainVerificationWorkflowId } from '../core/ids';
import { domainCheckWorkflow, domainVerificationWorkflow } from '../workflows/domain-verification';
import { controlPlaneStart } from './control-plane';

// Domain checks are control plane: their own queue, first in priority, whatever the send backlog.

/**
 * A domain's background verification, `domain-verification:<domainId>`, checking until `checkUntil`. A
 * second start while one runs fails with WorkflowExecutionAlreadyStartedError, which the caller reads as
 * "already watched".
 */
export async function startDomainVerificationWorkflow(
  client: Client,
  taskQueuePrefix: string,
  domain: { workspaceId: string; domainId: string; checkUntil: Date },
): Promise<void> {
  await client.workflow.start(domainVerificationWorkflow, {
    ...controlPlaneStart(taskQueuePrefix, domain.workspaceId),
    workflowId: domainVerificationWorkflowId(domain.domainId),
    args: [{ workspaceId: domain.workspaceId, domainId: domain.domainId, checkUntil: domain.checkUntil.toISOString() }],
  });
}

/**
 * One check of a domain now, `domain-check:<domainId>`; the handle's result is the check's end. Concurrent
 * verify requests for one domain share the check that is already running.
 */
export function startDomainCheckWorkflow(client: Client, taskQueuePrefix: string, domain: { workspaceId: string; domainId: string }) {
  return client.workflow.start(domainCheckWorkflow, {
    ...controlPlaneStart(taskQueuePrefix, domain.workspaceId),
    workflowId: domainCheckWorkflowId(domain.domainId),
    args: [{ workspaceId: domain.workspaceId, domainId: domain.domainId }],
    workflowIdConflictPolicy: 'USE_EXISTING',
    workflowExecutionTimeout: '2 minutes',
  });
}
