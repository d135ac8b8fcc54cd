import { ActivityFailure, ApplicationFailure, proxyActivities } from '@temporalio/workflow';
import type { Activities } from '../activities';

export interface SendEmailInput {
  workspaceId: string;
  messageId: string;
  /** The `sends` task queue of this deployment (its name carries the configured prefix). */
  sendsTaskQueue: string;
}

export type SendEmailOutcome = 'sent' | 'failed' | 'skipped';

const internal = proxyActivities<Activities>({
  startToCloseTimeout: '1 minute',
  retry: { initialInterval: '1 second', maximumInterval: '1 minute', maximumAttempts: 10 },
});

/**
 * One message, from accepted to handed over to the provider. Rendering runs on the default queue and
 * stores its result on the message; delivery runs on the rate-limited `sends` queue. Provider throttling
 * and transient faults are retried with backoff by Temporal; a permanent refusal, or retries running out
 * after about a day, marks the message failed.
 */
export async function sendEmailWorkflow(input: SendEmailInput): Promise<SendEmailOutcome> {
  const { workspaceId, messageId } = input;
  const prepared = await internal.renderEmail(workspaceId, messageId);
  if (prepared === 'skip') return 'skipped';

  const delivery = proxyActivities<Activities>({
    taskQueue: input.sendsTaskQueue,
    startToCloseTimeout: '2 minutes',
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
    await delivery.deliverEmail(workspaceId, messageId);
    return 'sent';
  } catch (error) {
    if (!(error instanceof ActivityFailure)) throw error;
    const cause = error.cause instanceof ApplicationFailure ? error.cause.message : String(error.cause?.message ?? error.message);
    await internal.markMessageFailed(workspaceId, messageId, cause);
    return 'failed';
  }
}
