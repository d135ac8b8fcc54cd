import type { Sequelize } from 'sequelize';
import { AppError } from '../../core/errors';
import { INBOUND_CONTACT_EVENTS } from '../../core/inbox/contact-events';
import { decodeTimelineCursor, encodeTimelineCursor, readBefore, rowsPerSource, type TimelineCursor, timelinePage } from '../../core/timeline-cursor';
import { contactEvents } from '../../db/repositories/contact-events';
import { identitiesOf } from '../../db/repositories/contact-identities';
import { contactConversionEntries, contactMessages, contactTouches, type TimelineConversion, type TimelineMessage } from '../../db/repositories/contact-timeline';
import { enrollmentEntries } from '../../db/repositories/enrollment-journey';
import { receivedMailOfContact } from '../../db/repositories/inbox-messages';
import { skipsOfContact } from '../../db/repositories/journey-skips';

/** One entry of GET /contacts/:id/journey (ContactJourneyEntry), with its moment still a Date. */
export type JourneyEntry = { type: 'touch' | 'enrollment' | 'message_sent' | 'email_received' | 'note' | 'conversion'; at: Date; test: boolean } & Record<string, unknown>;

type Keyed = JourneyEntry & { key: string };

export interface JourneyPageInput {
  limit: number;
  cursor?: string;
  /** The older way to page back: entries strictly before this moment. */
  before?: string;
}

/** A sent message with what its recipient did with it (the spec's engagement summary: email only). */
function messageEntry(message: TimelineMessage): Keyed {
  const { engagement } = message;
  return {
    key: `message_sent:${message.messageId}`,
    type: 'message_sent',
    at: message.at,
    kind: message.kind,
    messageId: message.messageId,
    channel: message.channel,
    subject: message.subject,
    status: message.status,
    test: false,
    ...(message.kind === 'campaign' && { campaignId: message.campaignId, campaignName: message.campaignName }),
    ...(message.enrollmentId !== null && {
      enrollmentId: message.enrollmentId,
      automationId: message.automationId,
      nodeId: message.nodeId,
      nodeType: 'message',
      // The spec: a message step is labelled by its email subject.
      nodeLabel: message.subject ?? 'message',
    }),
    ...(message.channel === 'email' && {
      events: {
        openedHuman: engagement.opensHuman,
        openedMachine: engagement.opensMachine,
        clicks: engagement.clicks,
        contentClicks: engagement.contentClicks,
        links: engagement.links,
        lastLinkUrl: engagement.lastLinkUrl,
        bounced: engagement.bounced,
        unsubscribed: engagement.unsubscribed,
      },
    }),
  };
}

/**
 * A conversion, and, for one the analytics product brought with its own UTM and no touch of ours in its
 * window, the analytics touch it carried (kind `analytics`, at the conversion's moment).
 */
function conversionEntries(conversion: TimelineConversion): Keyed[] {
  const utm = { utmSource: conversion.utmSource, utmMedium: conversion.utmMedium, utmCampaign: conversion.utmCampaign };
  const entry: Keyed = {
    key: `conversion:${conversion.id}`,
    type: 'conversion',
    at: conversion.at,
    kind: conversion.attributedKind,
    name: conversion.name,
    conversionId: conversion.id,
    conversionSource: conversion.source,
    valueCents: conversion.valueCents,
    currency: conversion.currency,
    touchpoints: conversion.touchpoints,
    messageId: conversion.messageId,
    campaignId: conversion.campaignId,
    automationId: conversion.automationId,
    ...utm,
    ...(conversion.orderId !== null && { orderId: conversion.orderId, status: conversion.orderStatus }),
    test: conversion.test,
  };
  const analyticsTouch = conversion.source === 'analytics' && !conversion.touched && Object.values(utm).some((value) => value !== null);
  if (!analyticsTouch) return [entry];
  return [entry, { key: `touch:analytics:${conversion.id}`, type: 'touch', at: conversion.at, kind: 'analytics', name: conversion.name, conversionId: conversion.id, ...utm, test: false }];
}

function cursorOf(input: JourneyPageInput): TimelineCursor | null {
  if (input.cursor === undefined) return null;
  const cursor = decodeTimelineCursor(input.cursor);
  if (!cursor) throw AppError.validation({ formErrors: [], fieldErrors: { cursor: ['Not a cursor this timeline gave (pass nextCursor as it was answered)'] } });
  return cursor;
}

/**
 * The contact's timeline, newest first: every message sent to it (campaign, transactional, journey) with
 * its engagement summary, its touches (clicks on our links, behavioural events, analytics visits), its
 * conversions, its enrollments (entered, where it stands while active, exited with the reason), the mail
 * it sent to the workspace's inboxes (`email_received`) and the message steps its journeys skipped
 * (`note`). Each source is read a page deep (and as deep again as the entries of the cursor's millisecond
 * already given) and the pages merged; `nextCursor` pages back through all of them.
 */
export async function contactJourney(db: Sequelize, workspaceId: string, contactId: string, input: JourneyPageInput): Promise<{ entries: JourneyEntry[]; nextCursor: string | null }> {
  const cursor = cursorOf(input);
  const window = { limit: rowsPerSource(cursor, input.limit), before: cursor ? readBefore(cursor) : input.before ? new Date(input.before) : undefined };
  const emails = (await identitiesOf(db, workspaceId, [contactId])).filter((identity) => identity.channel === 'email').map((identity) => identity.address);
  const [events, enrollments, messages, received, skips, touches, conversions] = await Promise.all([
    // A contact's mail is its `email_received` entry; the contact event it also made would repeat it.
    contactEvents(db, workspaceId, contactId, { ...window, exceptNames: INBOUND_CONTACT_EVENTS }),
    enrollmentEntries(db, workspaceId, contactId, window),
    contactMessages(db, workspaceId, contactId, emails, window),
    receivedMailOfContact(db, workspaceId, contactId, window),
    skipsOfContact(db, workspaceId, contactId, window),
    contactTouches(db, workspaceId, contactId, window),
    contactConversionEntries(db, workspaceId, contactId, window),
  ]);
  const entries: Keyed[] = [
    ...events.map((event): Keyed => ({ key: `touch:event:${event.id}`, type: 'touch', at: event.occurredAt, kind: 'event', name: event.name, test: false })),
    ...touches.map((touch): Keyed => ({
      key: `touch:${touch.id}`,
      type: 'touch',
      at: touch.at,
      kind: touch.kind,
      messageId: touch.messageId,
      campaignId: touch.campaignId,
      automationId: touch.automationId,
      url: touch.url,
      isContent: touch.isContent,
      utmSource: touch.utmSource,
      utmMedium: touch.utmMedium,
      utmCampaign: touch.utmCampaign,
      test: false,
    })),
    ...conversions.flatMap(conversionEntries),
    ...messages.map(messageEntry),
    ...enrollments.map((entry): Keyed => ({
      key: `enrollment:${entry.enrollmentId}:${entry.phase}`,
      type: 'enrollment',
      at: entry.at,
      phase: entry.phase,
      enrollmentId: entry.enrollmentId,
      automationId: entry.automationId,
      automationName: entry.automationName,
      status: entry.status,
      ...(entry.phase === 'current' && { nodeId: entry.nodeId, nodeType: entry.nodeType, nodeLabel: entry.nodeLabel }),
      ...(entry.phase === 'exited' && { exitReason: entry.exitReason }),
      test: false,
    })),
    // A message step skipped at run time. Nothing was sent, so not `message_sent`: the spec's closed list of
    // entry types has `note` for what the timeline tells without a message (docs/journeys.md).
    ...skips.map((skip): Keyed => ({
      key: `note:${skip.enrollmentId}:${skip.nodeId}`,
      type: 'note',
      at: skip.at,
      kind: 'automation',
      status: 'skipped',
      skipReason: skip.reason,
      enrollmentId: skip.enrollmentId,
      automationId: skip.automationId,
      automationName: skip.automationName,
      nodeId: skip.nodeId,
      nodeType: 'message',
      nodeLabel: skip.nodeLabel,
      test: false,
    })),
    ...received.map((mail): Keyed => ({
      key: `email_received:${mail.inboxMessageId}`,
      type: 'email_received',
      at: mail.at,
      subject: mail.subject,
      // The mailbox the contact wrote to. Inboxes live only on the workspace's own verified domains, so its
      // domain kind is always `custom` (as opposed to a shared platform domain, which inboxes never use).
      to: { address: mail.inboxAddress, displayName: mail.inboxDisplayName, domainKind: 'custom' },
      inboxId: mail.inboxId,
      threadId: mail.threadId,
      inboxMessageId: mail.inboxMessageId,
      test: false,
    })),
  ];
  const { page, next } = timelinePage(entries, cursor, input.limit);
  return { entries: page.map(({ key: _key, ...entry }) => entry), nextCursor: next ? encodeTimelineCursor(next) : null };
}
