import type { WebhookDeliveryRecord } from '../../db/repositories/webhook-deliveries';
import type { WebhookRecord } from '../../db/repositories/webhooks';
import type { WebhookDeliveryView, WebhookView } from './schemas';

export function webhookView(webhook: WebhookRecord): WebhookView {
  return {
    id: webhook.id,
    url: webhook.url,
    description: webhook.description,
    events: webhook.events,
    enabled: webhook.enabled,
    createdAt: webhook.createdAt.toISOString(),
  };
}

export function webhookDeliveryView(delivery: WebhookDeliveryRecord): WebhookDeliveryView {
  return {
    id: delivery.id,
    event: delivery.event,
    status: delivery.status,
    statusCode: delivery.statusCode,
    createdAt: delivery.createdAt.toISOString(),
    error: delivery.error,
    nextAttemptAt: delivery.nextAttemptAt?.toISOString() ?? null,
    attempts: delivery.attempts.map((attempt) => ({
      attempt: attempt.attempt,
      status: attempt.status,
      statusCode: attempt.statusCode,
      durationMs: attempt.durationMs,
      error: attempt.error,
      createdAt: attempt.startedAt.toISOString(),
    })),
  };
}
