/**
 * The events a webhook can subscribe to (decisions: "Webhook event names"): email events are named
 * `email.<what happened>`, chat messages' (WhatsApp, Telegram) `message.<what happened>`, platform events
 * `<resource>.<state>`. Which stored event becomes which of them is decided where the events are stored,
 * by the database (`message_webhook_event_name` and `webhook_event_name`, migrations 0011 and 0019,
 * documented in docs/webhooks.md), so every code path that writes an event fans out alike.
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
  // WhatsApp and Telegram messages: sent (the provider took it), delivered (Twilio), failed (for good).
  'message.sent',
  'message.delivered',
  'message.failed',
  // A customer's WhatsApp or Telegram message to the workspace.
  'message.received',
] as const;

export type WebhookEvent = (typeof WEBHOOK_EVENTS)[number];

/** A webhook subscribed to `["*"]` receives every event, including ones added later. */
export const ALL_WEBHOOK_EVENTS = '*';

/** Endpoints per workspace: every event is delivered once per subscribed endpoint, so fan-out stays bounded. */
export const MAX_WEBHOOKS_PER_WORKSPACE = 20;
