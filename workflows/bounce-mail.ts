import { proxyLocalActivities } from '@temporalio/workflow';
import type { BounceMailActivities, BounceMailInput, BounceMailOutcome } from '../activities/bounce-mail';

/**
 * A parse and a few statements, retried until the database and the blob store answer (a report that does
 * not parse records nothing, it never throws). A local activity, as inbound mail's: no activity task
 * through the server for what is one short step.
 */
const { processBounceMail } = proxyLocalActivities<BounceMailActivities>({
  startToCloseTimeout: '1 minute',
  retry: { initialInterval: '2 seconds', backoffCoefficient: 2, maximumInterval: '2 minutes' },
});

/**
 * One per bounce or complaint mail that reached a VERP return path at our MX (`bounce:<digest>`): read the
 * report, record its bounce, delay or complaint on the message and recipient the token names.
 */
export async function bounceMailWorkflow(input: BounceMailInput): Promise<BounceMailOutcome> {
  return processBounceMail(input);
}
