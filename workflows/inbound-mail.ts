import { proxyLocalActivities } from '@temporalio/workflow';
import type { InboundMailActivities, InboundMailInput, ProcessOutcome } from '../activities/inbox-mail';

/**
 * Processing touches only our database and blob store; it throws only when one of them fails, which is
 * retried until they answer (malformed mail never throws: it is stored flagged). Two minutes cover a 40 MB
 * message parsed with its attachments uploaded. Local activities: each step is a marker in the history, with no
 * activity task through the Temporal server, which on a loaded server is most of a message's cost
 * (docs/benchmarks.md). Both steps are idempotent (the row is locked and must still be `received`; the
 * contact event is stored once), so a worker lost mid-step and the step run again changes nothing.
 */
const { processInboundMail, matchInboundContactEvent } = proxyLocalActivities<InboundMailActivities>({
  startToCloseTimeout: '2 minutes',
  retry: { initialInterval: '2 seconds', backoffCoefficient: 2, maximumInterval: '2 minutes' },
});

/**
 * One per accepted inbound message of an inbox (`inbound:<inboxMessageId>`): parse it, thread it and store
 * it with its `email.received` platform event in one step, then tell the sender's journeys (when the sender
 * is a known contact) that the contact replied (`email.replied`) or wrote (`email.received`).
 */
export async function inboundMailWorkflow(input: InboundMailInput): Promise<ProcessOutcome> {
  const outcome = await processInboundMail(input);
  if (outcome.status !== 'missing' && outcome.contactEvent) await matchInboundContactEvent(input);
  return outcome;
}
