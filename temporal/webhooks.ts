import type { Client } from '@temporalio/client';
import { webhookDeliveryWorkflowId } from '../core/ids';
import { webhookDeliveryWorkflow, type WebhookDeliveryInput } from '../workflows/webhook-delivery';
import { controlPlaneStart } from './control-plane';
import { startOnce } from './start-once';

/**
 * One run of a webhook delivery, on the control plane's queue and priority with the workspace as fairness
 * key, so a workspace's burst of events neither waits behind sends nor crowds out other workspaces.
 */
export async function startWebhookDeliveryWorkflow(client: Client, taskQueuePrefix: string, delivery: WebhookDeliveryInput): Promise<string> {
  const workflowId = webhookDeliveryWorkflowId(delivery.deliveryId, delivery.run);
  await startOnce(() =>
    client.workflow.start(webhookDeliveryWorkflow, {
      ...controlPlaneStart(taskQueuePrefix, delivery.workspaceId),
      workflowId,
      args: [delivery],
      workflowIdReusePolicy: 'REJECT_DUPLICATE',
    }),
  );
  return workflowId;
}
