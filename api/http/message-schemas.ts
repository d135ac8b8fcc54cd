import { z } from 'zod';
import { MAILBOX_LIST_PATTERN, MAILBOX_PATTERN, SINGLE_LINE_PATTERN } from './formats';
import { MAX_MAILBOX_CHARS } from '../../core/addresses';
import { TEMPLATE_LIMITS } from '../../core/templates/content';

/**
 * What every resource that sends or shows messages shares (emails, messages, inboxes, campaigns,
 * automations): addresses and subjects as they are given, and a message's status and link statistics as
 * they are answered. Here rather than in one resource's folder, so resources never import each other.
 */

// Bounded before the address parser sees them: it must never be handed a megabyte string.
export const MailboxSchema = z.string().min(1).max(MAX_MAILBOX_CHARS, `At most ${MAX_MAILBOX_CHARS} characters per address`).meta({ pattern: MAILBOX_PATTERN });

/** `address`, `Name <address>`, several comma-separated in one string, or an array of those. */
export const addressList = (max: number, min = 1) =>
  z.union([
    z
      .string()
      .min(1)
      .max(max * MAX_MAILBOX_CHARS, `At most ${max * MAX_MAILBOX_CHARS} characters (${max} addresses)`)
      .meta({ pattern: MAILBOX_LIST_PATTERN }),
    z.array(MailboxSchema).min(min).max(max),
  ]);

// A subject with a line break would start a new header.
export const SubjectSchema = z
  .string()
  .min(1)
  .max(TEMPLATE_LIMITS.subject.max)
  .refine((value) => !/[\r\n]/.test(value), 'May not contain line breaks')
  .meta({ pattern: SINGLE_LINE_PATTERN });

export const MessageEngagementSchema = z
  .object({
    opensHuman: z.number().int(),
    opensMachine: z.number().int(),
    clicks: z.number().int(),
    contentClicks: z.number().int(),
    lastLinkUrl: z.string().nullable(),
    lastLinkRole: z.string().nullable(),
    links: z.array(z.string()),
    unsubscribed: z.boolean(),
    bounced: z.boolean(),
    lastEventAt: z.iso.datetime().nullable(),
  })
  .meta({ id: 'MessageEngagement' });

export const MessageEventSchema = z
  .object({
    type: z.string(),
    classification: z.string().nullable(),
    createdAt: z.iso.datetime(),
    linkUrl: z.string().nullable(),
    linkId: z.string().nullable(),
    linkRole: z.string().nullable(),
    bounceType: z.string().nullable().optional(),
    reason: z.string().nullable().optional(),
  })
  .meta({ id: 'MessageEvent' });

export const EmailClickedLinkSchema = z
  .object({
    url: z.string(),
    canonicalUrl: z.string(),
    role: z.string().nullable(),
    isContent: z.boolean(),
    count: z.number().int(),
    lastAt: z.iso.datetime(),
  })
  .meta({ id: 'EmailClickedLink' });

export const LinkStatSchema = z
  .object({
    url: z.string().describe('The raw variant clicked most'),
    canonicalUrl: z.string().describe('Without utm_* parameters and trailing slash: the grouping key'),
    role: z.string().nullable(),
    isContent: z.boolean(),
    uniqueClicks: z.number().int().describe('Distinct messages with a human click'),
    totalClicks: z.number().int().describe('Human clicks'),
    machineClicks: z.number().int().describe('Clicks by scanners and other machines: reported, not counted'),
    firstClickAt: z.iso.datetime().nullable(),
    lastClickAt: z.iso.datetime().nullable(),
    share: z.number().min(0).max(100).nullable().describe("Share of the scope's unique human clicks, in percent"),
  })
  .meta({ id: 'LinkStat' });

export const LinkStatListSchema = z.object({ data: z.array(LinkStatSchema) }).meta({ id: 'LinkStatList' });

export const LinkStatsQuery = z.object({
  from: z.iso.datetime({ offset: true }).optional(),
  until: z.iso.datetime({ offset: true }).optional(),
  campaignId: z.uuid().optional(),
});

export const MessageKindSchema = z.enum(['transactional', 'campaign', 'automation']);

export const MessageStatusSchema = z
  .object({
    id: z.uuid(),
    status: z.string(),
    channel: z.string(),
    to: z.string().nullable(),
    toAddresses: z.array(z.string()),
    from: z.string().nullable(),
    subject: z.string().nullable(),
    provider: z.string().nullable(),
    providerMessageId: z.string().nullable(),
    idempotencyKey: z.string(),
    kind: MessageKindSchema,
    campaignId: z.uuid().nullable(),
    enrollmentId: z.uuid().nullable(),
    automationId: z.uuid().nullable().optional().describe('The automation of a journey message (with enrollmentId)'),
    contactId: z.uuid().nullable(),
    attachments: z.array(z.object({ id: z.string(), filename: z.string(), contentType: z.string(), size: z.number().int() })),
    createdAt: z.iso.datetime(),
    fallbackOf: z.uuid().nullable().optional().describe('GET /messages/:id: the failed message this one is the fallback of'),
    fallbackMessageId: z.uuid().nullable().optional().describe('GET /messages/:id: the message this one fell back to on the next channel'),
    engagement: MessageEngagementSchema,
    links: z.array(EmailClickedLinkSchema),
    events: z.array(MessageEventSchema),
  })
  .meta({ id: 'MessageStatus' });

export const EmailListRowSchema = z
  .object({
    id: z.uuid(),
    status: z.string(),
    to: z.string().nullable(),
    from: z.string().nullable(),
    subject: z.string().nullable(),
    kind: MessageKindSchema,
    campaignId: z.uuid().nullable(),
    enrollmentId: z.uuid().nullable(),
    contactId: z.uuid().nullable(),
    createdAt: z.iso.datetime(),
    engagement: MessageEngagementSchema,
  })
  .meta({ id: 'EmailListRow' });

export const EmailListSchema = z
  .object({ data: z.array(EmailListRowSchema), total: z.number().int(), limit: z.number().int(), offset: z.number().int() })
  .meta({ id: 'EmailList' });

