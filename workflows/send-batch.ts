import { proxyActivities, sleep } from '@temporalio/workflow';
import type { Activities } from '../activities';

export interface SendBatchInput {
  workspaceId: string;
  /** Bulk messages of one workspace (a campaign's, a journey's), already accepted. */
  messageIds: string[];
  sendsTaskQueue: string;
}

export interface SendBatchOutcome {
  sent: number;
  failed: number;
}

/** Our own database only: retried until it is back (see send-message.ts). */
const internal = proxyActivities<Activities>({
  startToCloseTimeout: '5 minutes',
  retry: { initialInterval: '1 second', maximumInterval: '1 minute' },
});

/** Rounds of delivery for the messages a provider did not take yet: about a day, as for a single send. */
const MAX_ROUNDS = 60;

function backoffMs(round: number): number {
  return Math.min(5_000 * 2 ** (round - 1), 30 * 60_000);
}

/**
 * A batch of bulk messages, from accepted to handed over to the provider, with Temporal's cost amortized:
 * one delivery call for the whole batch (a few history events per hundreds of messages), while each
 * message is still rendered, claimed, sent and recorded on its own. Messages the
 * provider did not take (throttling, an outage) are retried in later rounds with backoff; whatever is left
 * after about a day ends failed, like a single send.
 */
export async function sendBatchWorkflow(input: SendBatchInput): Promise<SendBatchOutcome> {
  const { workspaceId } = input;
  const delivery = proxyActivities<Activities>({
    taskQueue: input.sendsTaskQueue,
    // A batch waits its turns under the provider's rate; the heartbeat, not this, notices a dead worker.
    startToCloseTimeout: '30 minutes',
    heartbeatTimeout: '30 seconds',
    retry: { initialInterval: '5 seconds', backoffCoefficient: 2, maximumInterval: '5 minutes', maximumAttempts: 20 },
  });
  let pending = input.messageIds;
  const outcome: SendBatchOutcome = { sent: 0, failed: 0 };
  for (let round = 1; pending.length > 0; round += 1) {
    const result = await delivery.deliverMessages(workspaceId, pending);
    outcome.sent += result.sent;
    outcome.failed += result.failed;
    pending = result.retry;
    if (pending.length === 0) break;
    if (round >= MAX_ROUNDS) {
      await internal.markMessagesFailed(workspaceId, pending, 'the provider did not accept the message after about a day of retries');
      outcome.failed += pending.length;
      break;
    }
    await sleep(backoffMs(round));
  }
  return outcome;
}
