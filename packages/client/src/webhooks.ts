import { Webhook, WebhookVerificationError } from 'standardwebhooks';

export { WebhookVerificationError };

/**
 * The events a webhook can subscribe to (docs/webhooks.md): a copy of the service's list, checked against it
 * by a unit test. A newer service may send more: handle unknown types with a default branch.
 */
export const WEBHOOK_EVENT_TYPES = [
  'email.sent',
  'email.delivered',
  'email.delivery_delayed',
  'email.bounced',
  'email.complained',
  'email.opened',
  'email.clicked',
  'email.failed',
  'email.unsubscribed',
  'email.received',
  'domain.verified',
  'domain.failed',
  'message.sent',
  'message.delivered',
  'message.failed',
  'message.received',
] as const;

export type WebhookEventType = (typeof WEBHOOK_EVENT_TYPES)[number];

/** What every event of a sent message carries; `emailId` for email, `messageId` for WhatsApp and Telegram. */
export interface SentMessageEventData {
  emailId?: string;
  messageId?: string;
  kind: 'transactional' | 'campaign' | 'automation';
  channel: 'email' | 'whatsapp' | 'telegram';
  from: string | null;
  to: string[];
  subject: string | null;
  contactId: string | null;
  campaignId: string | null;
  enrollmentId: string | null;
  automationId?: string | null;
  /** email.delivered, email.bounced, email.complained: the recipients the provider reported. */
  recipients?: string[];
  /** email.bounced */
  bounceType?: 'hard' | 'soft' | null;
  /** email.bounced, email.failed, message.failed */
  reason?: string | null;
  /** email.opened, email.clicked: always `human` (other opens and clicks send no webhook). */
  classification?: string | null;
  /** email.clicked */
  link?: { url: string | null; id: string | null; role: string | null };
}

/** domain.verified, domain.failed: the domain after its records check. */
export interface DomainEventData {
  id: string;
  name: string;
  status: string;
  previousStatus?: string | null;
  detail?: string | null;
  records?: unknown;
  [key: string]: unknown;
}

/** email.received (inbound mail to an inbox) and message.received (a customer's WhatsApp or Telegram message). */
export interface ReceivedEventData {
  [key: string]: unknown;
}

type SentEventType = Exclude<WebhookEventType, 'domain.verified' | 'domain.failed' | 'email.received' | 'message.received'>;

interface EventOf<Type extends string, Data> {
  type: Type;
  /** When the event happened (ISO 8601). */
  createdAt: string;
  data: Data;
}

/** The body of a webhook request: `{ type, createdAt, data }`, discriminated by `type`. */
export type WebhookEvent =
  | EventOf<SentEventType, SentMessageEventData>
  | EventOf<'domain.verified' | 'domain.failed', DomainEventData>
  | EventOf<'email.received' | 'message.received', ReceivedEventData>;

export interface VerifyWebhookInput {
  /** The webhook's secret as the service gave it at creation or rotation: `whsec_<base64>`. */
  secret: string;
  /**
   * The raw request body, exactly as received (Express: `express.raw({ type: 'application/json' })`). A
   * parsed object cannot be verified: JSON parsing changes the bytes the signature covers.
   */
  payload: string | Uint8Array | ArrayBuffer;
  /** The request's headers: Node's `req.headers`, a fetch `Headers`, or a plain record (any case). */
  headers: Headers | Record<string, string | string[] | undefined>;
}

/**
 * Checks a webhook request the service sent (Standard Webhooks 1.0, with the `standardwebhooks` package) and
 * returns its event. Throws WebhookVerificationError when a header is missing, no signature matches (a
 * tampered body, a wrong secret), or the timestamp is more than 5 minutes from this clock (a replay). During
 * a secret rotation the request carries two signatures; either secret verifies it.
 *
 * Deliveries are at least once: deduplicate on the `webhook-id` header.
 */
export function verifyWebhook(input: VerifyWebhookInput): WebhookEvent {
  const payload = payloadText(input.payload);
  const verified: unknown = new Webhook(input.secret.trim()).verify(payload, headerRecord(input.headers));
  if (!isRecord(verified) || typeof verified.type !== 'string' || typeof verified.createdAt !== 'string' || !isRecord(verified.data)) {
    throw new WebhookVerificationError('The signed body is not a webhook event ({ type, createdAt, data })');
  }
  return verified as unknown as WebhookEvent;
}

function payloadText(payload: unknown): string {
  if (typeof payload === 'string') return payload;
  if (payload instanceof Uint8Array || payload instanceof ArrayBuffer) return new TextDecoder().decode(payload);
  throw new TypeError('verifyWebhook needs the raw body (a string or bytes), not a parsed object: parsing changes what was signed');
}

function headerRecord(headers: VerifyWebhookInput['headers']): Record<string, string> {
  const record: Record<string, string> = {};
  if (typeof Headers !== 'undefined' && headers instanceof Headers) {
    headers.forEach((value, name) => {
      record[name.toLowerCase()] = value;
    });
    return record;
  }
  for (const [name, value] of Object.entries(headers)) {
    // A repeated header (two signature headers through a proxy) is one list of signatures.
    if (value !== undefined) record[name.toLowerCase()] = Array.isArray(value) ? value.join(' ') : value;
  }
  return record;
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}
