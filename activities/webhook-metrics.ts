import { Counter } from 'prom-client';
import { PublicFetchError } from '../infra/public-fetch';
import { messagingMetrics } from '../services/metrics/registry';

/**
 * Webhook attempts by result: `succeeded`, or the class of failure an operator acts on differently. An
 * endpoint's own errors (http_4xx, http_5xx) are the customer's to fix; `timeout` and `connection` (refused,
 * reset, unresolvable) are theirs too unless every endpoint shows them at once, which points at our egress;
 * `blocked` is our SSRF guard refusing the target's address. No endpoint or workspace label: see
 * services/metrics/registry.ts (the delivery log, GET /webhooks/:id/deliveries, names the endpoint).
 */
export type WebhookAttemptResult = 'succeeded' | 'http_4xx' | 'http_5xx' | 'http_other' | 'timeout' | 'connection' | 'blocked' | 'other';

const attempts = new Counter({
  name: 'messaging_webhook_attempts_total',
  help: 'Webhook delivery attempts by result (succeeded, http_4xx, http_5xx, http_other, timeout, connection, blocked, other)',
  labelNames: ['result'] as const,
  registers: [messagingMetrics],
});

const disabled = new Counter({
  name: 'messaging_webhook_endpoints_disabled_total',
  help: 'Webhook endpoints disabled by their failures: gone (answered 410) or failing (every attempt failed for days)',
  labelNames: ['reason'] as const,
  registers: [messagingMetrics],
});

/** The class of an attempt that got an HTTP answer. */
export function resultOfStatus(statusCode: number): WebhookAttemptResult {
  if (statusCode >= 200 && statusCode <= 299) return 'succeeded';
  if (statusCode >= 400 && statusCode <= 499) return 'http_4xx';
  if (statusCode >= 500 && statusCode <= 599) return 'http_5xx';
  return 'http_other';
}

/** The class of an attempt that got no answer. */
export function resultOfError(error: unknown): WebhookAttemptResult {
  if (!(error instanceof PublicFetchError)) return 'other';
  switch (error.reason) {
    case 'timeout':
      return 'timeout';
    case 'network':
    case 'unresolvable':
      return 'connection';
    case 'blocked_address':
    case 'not_https':
    case 'invalid_url':
      return 'blocked';
    default:
      return 'other';
  }
}

export function countWebhookAttempt(result: WebhookAttemptResult): void {
  attempts.inc({ result });
}

export function countEndpointDisabled(reason: 'gone' | 'failing'): void {
  disabled.inc({ reason });
}
