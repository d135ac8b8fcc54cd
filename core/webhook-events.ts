/**
 * The events a webhook can subscribe to (decisions: "Webhook event names"): email events are named
 * `email.<what happened>`, platform events `<resource>.<state>`. Which stored event becomes which of
 * them is decided where the events are stored, by the database (`webhook_event_name` in migration
 * 0011-webhooks, documented in docs/webhooks.md), so every code path that writes an event fans out alike.
 */
export const WEBHOOK_EVENTS = [
  'email.sent',
  'email.delivered',
  'email.delivery_delayed',
  'email.bounced',
  'email.complained',
  'email.opened',
  'email.clicked',
  'email.failed',
  'email.unsubscribed',
  // Inbound mail to an inbox: a valid subscription now, delivered once inboxes exist.
  'email.received',
  'domain.verified',
  'domain.failed',
] as const;

export type WebhookEvent = (typeof WEBHOOK_EVENTS)[number];

/** A webhook subscribed to `["*"]` receives every event, including ones added later. */
export const ALL_WEBHOOK_EVENTS = '*';

/** Endpoints per workspace: every event is delivered once per subscribed endpoint, so fan-out stays bounded. */
export const MAX_WEBHOOKS_PER_WORKSPACE = 20;
