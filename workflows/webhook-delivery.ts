import { proxyActivities, sleep } from '@temporalio/workflow';
import type { WebhookActivities, WebhookAttemptOutcome } from '../activities/webhooks';
import { retryDelayAfter } from '../core/webhook-delivery';

/**
 * An attempt is a 15 s request and a few statements. The activity throws only when our own database
 * fails; that is retried until it answers, never counted against the endpoint's schedule.
 */
const { attemptWebhookDelivery } = proxyActivities<WebhookActivities>({
  startToCloseTimeout: '1 minute',
  retry: { initialInterval: '5 seconds', backoffCoefficient: 2, maximumInterval: '5 minutes' },
});

export interface WebhookDeliveryInput {
  workspaceId: string;
  deliveryId: string;
  /** Which run of the delivery this is (a manual retry is a new run). */
  run: number;
}

/**
 * One per delivery (id `webhook:<deliveryId>`, `webhook:<deliveryId>:<run>` for later runs), on the
 * control queue: the first attempt at once, then one after each wait of the schedule (5 s, 5 min,
 * 30 min, 2 h, 5 h, 10 h, 10 h). The waits are durable timers, so a retry due in ten hours survives any
 * restart of the workers. Ends at the first success, or when the delivery fails for good (the last
 * attempt failed, the endpoint answered 410 or was disabled, the delivery was deleted).
 */
export async function webhookDeliveryWorkflow(input: WebhookDeliveryInput): Promise<WebhookAttemptOutcome> {
  for (let attempt = 1; ; attempt += 1) {
    // Null after the last attempt: the activity then records a failure as final.
    const retryInMs = retryDelayAfter(attempt);
    const outcome = await attemptWebhookDelivery({ ...input, retryInMs });
    if (outcome !== 'retrying' || retryInMs === null) return outcome;
    await sleep(retryInMs);
  }
}
