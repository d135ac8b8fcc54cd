import type { WebhookEvent } from './webhook-events';

/**
 * The body of a webhook request: `{ type, createdAt, data }` (decisions: "Webhooks"). It is built once,
 * at a delivery's first attempt, and stored, so every retry sends the same bytes under the same
 * `webhook-id`. Field names follow the API's (camelCase, `emailId` is the id of `GET /emails/:id`).
 */
export interface WebhookBody {
  type: WebhookEvent;
  /** When the event happened (ISO 8601). */
  createdAt: string;
  data: Record<string, unknown>;
}

/** A stored message event and the message it belongs to. */
export interface MessageEventSource {
  kind: 'message_event';
  type: string;
  classification: string | null;
  reason: string | null;
  bounceType: string | null;
  linkUrl: string | null;
  linkId: string | null;
  linkRole: string | null;
  data: Record<string, unknown>;
  createdAt: Date;
  message: {
    id: string;
    kind: string;
    channel: string;
    from: string | null;
    to: string[];
    subject: string | null;
    contactId: string | null;
    campaignId: string | null;
    enrollmentId: string | null;
    /** Set on journey messages, with enrollmentId. */
    automationId: string | null;
  };
}

/** A stored platform event (domain.verified, domain.failed): its data was written for webhooks. */
export interface PlatformEventSource {
  kind: 'platform_event';
  data: Record<string, unknown>;
  createdAt: Date;
}

export type WebhookEventSource = MessageEventSource | PlatformEventSource;

/** What one kind of message event adds to the common fields. */
function eventDetails(source: MessageEventSource): Record<string, unknown> {
  const recipients = Array.isArray(source.data.recipients) ? { recipients: source.data.recipients } : {};
  switch (source.type) {
    case 'delivered':
    case 'complaint':
      return recipients;
    case 'bounce':
      return { bounceType: source.bounceType, reason: source.reason, ...recipients };
    case 'failed':
      return { reason: source.reason };
    case 'open':
      return { classification: source.classification };
    case 'click':
      return { classification: source.classification, link: { url: source.linkUrl, id: source.linkId, role: source.linkRole } };
    default:
      return {};
  }
}

export function webhookBody(event: WebhookEvent, source: WebhookEventSource): WebhookBody {
  if (source.kind === 'platform_event') return { type: event, createdAt: source.createdAt.toISOString(), data: source.data };
  const { message } = source;
  return {
    type: event,
    createdAt: source.createdAt.toISOString(),
    data: {
      // Chat messages are read at GET /messages/:id; email keeps the name its consumers already use.
      ...(message.channel === 'email' ? { emailId: message.id } : { messageId: message.id }),
      kind: message.kind,
      channel: message.channel,
      from: message.from,
      to: message.to,
      subject: message.subject,
      contactId: message.contactId,
      campaignId: message.campaignId,
      enrollmentId: message.enrollmentId,
      automationId: message.automationId,
      ...eventDetails(source),
    },
  };
}
