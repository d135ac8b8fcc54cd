/**
 * Workflow ids are built from business keys so that a repeat start of the same work collides in
 * Temporal instead of running twice.
 */
export const USAGE_ROLLUP_WORKFLOW_ID = 'usage-rollup';

/** One send workflow per message, of every kind. */
export function sendWorkflowId(messageId: string): string {
  return `send:${messageId}`;
}

/** One background verification per domain: re-checks with backoff, then watches a verified domain for drift. */
export function domainVerificationWorkflowId(domainId: string): string {
  return `domain-verification:${domainId}`;
}

/** The check a customer asks for with `POST /domains/:id/verify`; concurrent requests share one run. */
export function domainCheckWorkflowId(domainId: string): string {
  return `domain-check:${domainId}`;
}

/** Starts the background verification of domains that have none (created while Temporal was unreachable). */
export const DOMAIN_WATCHDOG_WORKFLOW_ID = 'domain-watchdog';

/** Repairs messages whose send workflow closed or vanished before they reached an end state. */
export const MESSAGE_RECONCILER_WORKFLOW_ID = 'message-reconciler';

/** One batch of bulk messages, named after its first message (a message travels in one batch). */
export function sendBatchWorkflowId(firstMessageId: string): string {
  return `send-batch:${firstMessageId}`;
}

/** One workflow per run of a webhook delivery: the first run is `webhook:<deliveryId>`, a later one (a manual retry) adds its number. */
export function webhookDeliveryWorkflowId(deliveryId: string, run: number): string {
  return run === 1 ? `webhook:${deliveryId}` : `webhook:${deliveryId}:${run}`;
}

/** One workflow per campaign: it waits for the schedule, snapshots the audience and feeds the outbox. */
export function campaignWorkflowId(campaignId: string): string {
  return `campaign:${campaignId}`;
}

/** One journey workflow per enrollment: it interprets the automation version pinned when the contact entered. */
export function enrollmentWorkflowId(enrollmentId: string): string {
  return `enrollment:${enrollmentId}`;
}

/** One workflow per enroll request (`POST /automations/:id/enroll`): it pages through the audience. */
export function automationEnrollWorkflowId(requestId: string): string {
  return `automation-enroll:${requestId}`;
}

/** Starts enrollments whose workflow never started and matches events stored but not yet matched. */
export const JOURNEY_SWEEPER_WORKFLOW_ID = 'journey-sweeper';

/** One inbound-mail workflow per accepted message of an inbox (parse, rules, thread, store, email.received). */
export function inboundMailWorkflowId(inboxMessageId: string): string {
  return `inbound:${inboxMessageId}`;
}

/** One workflow per contact import: prepare, then slices of batches until the file ends. */
export function importWorkflowId(importId: string): string {
  return `import:${importId}`;
}

/**
 * One bounce-mail workflow per report mail and return path: the digest of the spooled bytes and the token,
 * so a report delivered twice (the sender's retry after a lost 250) is one workflow.
 */
export function bounceMailWorkflowId(digest: string): string {
  return `bounce:${digest}`;
}
