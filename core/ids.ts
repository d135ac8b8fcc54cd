/**
 * Workflow ids are built from business keys so that a repeat start of the same work collides in
 * Temporal instead of running twice.
 */
export const USAGE_ROLLUP_WORKFLOW_ID = 'usage-rollup';

/** One send workflow per message, of every kind. */
export function sendWorkflowId(messageId: string): string {
  return `send:${messageId}`;
}
