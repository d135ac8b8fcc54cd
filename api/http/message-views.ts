import type { z } from 'zod';
import { emailContentOf } from '../../core/message-content';
import { isContentRole, type LinkRole } from '../../core/tracking/link-roles';
import type { LinkClicks } from '../../db/repositories/link-stats';
import type { MessageEvent } from '../../db/repositories/message-events';
import type { Message, MessageListItem } from '../../db/repositories/messages';
import type { EmailClickedLinkSchema, EmailListRowSchema, LinkStatSchema, MessageEngagementSchema, MessageStatusSchema } from './message-schemas';

function engagementView(message: MessageListItem): z.infer<typeof MessageEngagementSchema> {
  const engagement = message.engagement;
  return {
    opensHuman: engagement.opensHuman,
    opensMachine: engagement.opensMachine,
    clicks: engagement.clicks,
    contentClicks: engagement.contentClicks,
    lastLinkUrl: engagement.lastLinkUrl,
    lastLinkRole: engagement.lastLinkRole,
    links: engagement.links,
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

function clickedLinkView(link: LinkClicks): z.infer<typeof EmailClickedLinkSchema> {
  return {
    url: link.url,
    canonicalUrl: link.canonicalUrl,
    role: link.role,
    isContent: isContentRole(link.role as LinkRole | null),
    count: link.totalClicks,
    lastAt: (link.lastClickAt ?? new Date(0)).toISOString(),
  };
}

/** Per-link statistics; share is of the scope's unique human clicks, null when there are none. */
export function linkStatsView(links: LinkClicks[]): { data: Array<z.infer<typeof LinkStatSchema>> } {
  const unique = links.reduce((sum, link) => sum + link.uniqueClicks, 0);
  return {
    data: links.map((link) => ({
      url: link.url,
      canonicalUrl: link.canonicalUrl,
      role: link.role,
      isContent: isContentRole(link.role as LinkRole | null),
      uniqueClicks: link.uniqueClicks,
      totalClicks: link.totalClicks,
      machineClicks: link.machineClicks,
      firstClickAt: link.firstClickAt?.toISOString() ?? null,
      lastClickAt: link.lastClickAt?.toISOString() ?? null,
      share: unique === 0 ? null : Math.round((link.uniqueClicks / unique) * 10_000) / 100,
    })),
  };
}

export function messageStatusView(message: Message, events: MessageEvent[], clicked: LinkClicks[]): z.infer<typeof MessageStatusSchema> {
  return {
    ...emailListRowView(message),
    automationId: message.automationId,
    channel: message.channel,
    toAddresses: message.to,
    provider: message.provider,
    providerMessageId: message.providerMessageId,
    idempotencyKey: message.idempotencyKey,
    attachments: attachmentsOf(message),
    links: clicked.map(clickedLinkView),
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
