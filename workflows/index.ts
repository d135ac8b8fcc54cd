/** The workflow registry the worker bundles. Only deterministic code may be reachable from here. */
export { usageRollupWorkflow } from './usage-rollup';
export { sendEmailWorkflow } from './send-email';
export { domainCheckWorkflow, domainVerificationWorkflow } from './domain-verification';
export { domainWatchdogWorkflow } from './domain-watchdog';
export { messageReconcilerWorkflow } from './message-reconciler';
export { sendBatchWorkflow } from './send-batch';
