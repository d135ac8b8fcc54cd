import { WorkflowExecutionAlreadyStartedError } from '@temporalio/common';
import { continueAsNew, ParentClosePolicy, proxyActivities, sleep, startChild } from '@temporalio/workflow';
import type { DomainActivities } from '../activities/domains';
import { VERIFICATION_WINDOW_MS } from '../core/domain-status';
import { domainVerificationWorkflowId } from '../core/ids';
import { domainVerificationWorkflow } from './domain-verification';

const { findUnwatchedDomains } = proxyActivities<DomainActivities>({
  startToCloseTimeout: '1 minute',
  retry: { initialInterval: '10 seconds', backoffCoefficient: 2, maximumInterval: '10 minutes' },
});

const SWEEP_INTERVAL_MS = 60 * 60 * 1000;
const SWEEP_LIMIT = 200;

/**
 * One for the deployment (id `domain-watchdog`). Creating a domain must not depend on Temporal being up,
 * so a domain created while it was unreachable has no background verification; neither has one whose
 * workflow was terminated by an operator. Every hour this starts one for each such domain. A domain whose
 * verification is running answers "already started", which is the normal case and is skipped.
 */
export async function domainWatchdogWorkflow(): Promise<void> {
  const domains = await findUnwatchedDomains({ limit: SWEEP_LIMIT });
  for (const domain of domains) {
    try {
      await startChild(domainVerificationWorkflow, {
        workflowId: domainVerificationWorkflowId(domain.id),
        args: [{ workspaceId: domain.workspaceId, domainId: domain.id, checkUntil: new Date(Date.now() + VERIFICATION_WINDOW_MS).toISOString() }],
        // The verification outlives this sweep, which continues as new every hour.
        parentClosePolicy: ParentClosePolicy.ABANDON,
      });
    } catch (error) {
      if (!(error instanceof WorkflowExecutionAlreadyStartedError)) throw error;
    }
  }
  await sleep(SWEEP_INTERVAL_MS);
  await continueAsNew<typeof domainWatchdogWorkflow>();
}
