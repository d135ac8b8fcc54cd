import type { z } from 'zod';
import { emailContentOf } from '../../core/message-content';
import type { MessageEvent } from '../../db/repositories/message-events';
import type { Message, MessageListItem } from '../../db/repositories/messages';
import type { EmailListRowSchema, MessageEngagementSchema, MessageStatusSchema } from './schemas';

function engagementView(message: MessageListItem): z.infer<typeof MessageEngagementSchema> {
  const engagement = message.engagement;
  return {
    opensHuman: engagement.opensHuman,
    opensMachine: engagement.opensMachine,
    clicks: engagement.clicks,
    contentClicks: engagement.contentClicks,
    lastLinkUrl: engagement.lastLinkUrl,
    lastLinkRole: engagement.lastLinkRole,
    // Distinct clicked links come with click tracking; until then there are none to list.
    links: [],
    unsubscribed: engagement.unsubscribed,
    bounced: engagement.bounced,
    lastEventAt: engagement.lastEventAt ? engagement.lastEventAt.toISOString() : null,
  };
}

function attachmentsOf(message: Message) {
  const refs = emailContentOf(message.content).attachments;
  return refs.map(({ id, filename, contentType, size }) => ({ id, filename, contentType, size }));
}

export function emailListRowView(message: MessageListItem): z.infer<typeof EmailListRowSchema> {
  return {
    id: message.id,
    status: message.status,
    to: message.to[0] ?? null,
    from: message.fromAddress,
    subject: message.subject,
    kind: message.kind,
    campaignId: message.campaignId,
    enrollmentId: message.enrollmentId,
    contactId: message.contactId,
    createdAt: message.createdAt.toISOString(),
    engagement: engagementView(message),
  };
}

export function messageStatusView(message: Message, events: MessageEvent[]): z.infer<typeof MessageStatusSchema> {
  return {
    ...emailListRowView(message),
    channel: message.channel,
    toAddresses: message.to,
    provider: message.provider,
    providerMessageId: message.providerMessageId,
    idempotencyKey: message.idempotencyKey,
    attachments: attachmentsOf(message),
    links: [],
    events: events.map((event) => ({
      type: event.type,
      classification: event.classification,
      createdAt: event.createdAt.toISOString(),
      linkUrl: event.linkUrl,
      linkId: event.linkId,
      linkRole: event.linkRole,
      bounceType: event.bounceType,
      reason: event.reason,
    })),
  };
}
