import { Registry } from 'prom-client';

/**
 * The registry of the service's own metrics: what was accepted, sent, bounced, delivered, refused. One
 * per process, at module level, because the same event is recorded by code that runs in more than one
 * process (a bounce by the API's SES callback and by the worker's bounce-mail activity; an acceptance by the
 * API and by the worker's campaign and journey activities), and each process defines a metric once. Each
 * process's endpoint serves it beside its own registry (api/http/metrics.ts, workers/main.ts,
 * workers/inbox/smtp.ts): `withMessagingMetrics`.
 *
 * Every label here is a closed set (a channel, a provider, a status, an error code, a reason class), never an
 * id: a workspace or message id as a label makes one time series per tenant or per message, which grows
 * Prometheus's memory without bound and lets one busy tenant's churn cost every other one's queries.
 * Per-tenant questions are answered by the API (GET /usage, the message list), not by metrics.
 */
export const messagingMetrics = new Registry();

/** A process's own registry (default process metrics, its loops' gauges) with the service's metrics beside it. */
export function withMessagingMetrics(own: Registry): Registry {
  return Registry.merge([own, messagingMetrics]);
}
