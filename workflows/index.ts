/** The workflow registry the worker bundles. Only deterministic code may be reachable from here. */
export { usageRollupWorkflow } from './usage-rollup';
export { sendMessageWorkflow } from './send-message';
// The send workflow's name before it served every channel: sends already running under it finish under it.
export { sendMessageWorkflow as sendEmailWorkflow } from './send-message';
export { domainCheckWorkflow, domainVerificationWorkflow } from './domain-verification';
export { domainWatchdogWorkflow } from './domain-watchdog';
export { messageReconcilerWorkflow } from './message-reconciler';
export { sendBatchWorkflow } from './send-batch';
export { webhookDeliveryWorkflow } from './webhook-delivery';
export { campaignWorkflow } from './campaign';
export { automationEnrollWorkflow } from './automation-enroll';
export { journeySweeperWorkflow } from './journey-sweeper';
export { journeyWorkflow } from './journey';
export { inboundMailWorkflow } from './inbound-mail';
export { bounceMailWorkflow } from './bounce-mail';
export { analyticsSyncWorkflow } from './analytics-sync';
export { importWorkflow } from './import';
