import { ActivityFailure, ApplicationFailure, proxyActivities } from '@temporalio/workflow';
import type { Activities } from '../activities';

export interface SendMessageInput {
  workspaceId: string;
  messageId: string;
  /** The `sends` task queue of this deployment (its name carries the configured prefix). */
  sendsTaskQueue: string;
}

export type SendMessageOutcome = 'sent' | 'failed' | 'skipped' | 'suppressed';

/**
 * Activities that touch only our own database. They are retried without limit: the database comes back,
 * and giving up would leave the message without an end state. A failure that is the message's own (its
 * template, its variables) is a PermanentSendError and ends it at once.
 */
const internal = proxyActivities<Activities>({
  startToCloseTimeout: '1 minute',
  retry: { initialInterval: '1 second', maximumInterval: '1 minute', nonRetryableErrorTypes: ['PermanentSendError'] },
});

function reasonOf(error: ActivityFailure): string {
  const cause = error.cause;
  return cause instanceof ApplicationFailure ? cause.message : String(cause?.message ?? error.message);
}

/**
 * One message, from accepted to handed over to the provider: one activity on the `sends` queue renders it
 * (once: the result is stored on the message), takes its turn under the provider's rate and sends it,
 * which keeps Temporal's work per message to a few tasks. Provider throttling
 * and transient faults are retried with backoff by Temporal. Whatever fails after acceptance (the render,
 * a permanent refusal, retries running out after about a day) ends the message `failed`, with a `failed`
 * event and its quota given back.
 */
export async function sendMessageWorkflow(input: SendMessageInput): Promise<SendMessageOutcome> {
  const { workspaceId, messageId } = input;
  const delivery = proxyActivities<Activities>({
    taskQueue: input.sendsTaskQueue,
    startToCloseTimeout: '2 minutes',
    // The attempt heartbeats every 2 s from its start, so this only notices a dead worker.
    heartbeatTimeout: '10 seconds',
    retry: {
      initialInterval: '5 seconds',
      backoffCoefficient: 2,
      maximumInterval: '30 minutes',
      maximumAttempts: 60,
      nonRetryableErrorTypes: ['PermanentSendError'],
    },
  });
  try {
    const delivered = await delivery.deliverMessage(workspaceId, messageId);
    if (delivered === 'suppressed') return 'suppressed';
    return delivered === 'sent' ? 'sent' : 'skipped';
  } catch (error) {
    if (!(error instanceof ActivityFailure)) throw error;
    await internal.markMessageFailed(workspaceId, messageId, reasonOf(error));
    return 'failed';
  }
}
