import { z } from 'zod';
import { addressByChannel, text } from '../http/formats';
import { CHANNELS, CONSENTS } from '../../core/identities';
import { SUPPRESSION_REASONS } from '../../core/suppressions';

export const MAX_IDENTITIES = 20;
export const MAX_ATTRIBUTES = 200;

const Channel = z.enum(CHANNELS).describe('email; whatsapp (an E.164 phone number); telegram (a numeric chat id)');
const Consent = z.enum(CONSENTS).describe('unknown until declared');

export const IdentityInput = z
  .object({
    channel: Channel,
    address: z
      .string()
      .min(1)
      .max(320)
      .describe('Normalised before it is stored and matched (see the contacts guide). Its form follows the channel; a whatsapp number must also exist in its country\'s numbering plan'),
    consent: Consent.optional().describe('Changed only when given: leaving it out never clears an opt-in'),
    verified: z.boolean().optional().describe('Changed only when given'),
    isPrimary: z.boolean().optional().describe('true makes it the primary identity of its channel'),
  })
  // The address's form depends on the channel; a whatsapp number must also exist in its country's numbering plan.
  .meta({ id: 'ContactIdentityInput', ...addressByChannel({ channelRequired: true }) });

export const UpsertContactBody = z
  .object({
    identities: z.array(IdentityInput).min(1).max(MAX_IDENTITIES).describe('The natural key: an existing contact with any of these addresses is updated'),
    attributes: z
      .record(z.string().min(1).max(100), z.unknown())
      .refine((value) => Object.keys(value).length <= MAX_ATTRIBUTES, `At most ${MAX_ATTRIBUTES} attributes`)
      .optional()
      .describe('Merged into the contact\'s attributes; null deletes a key. Keys with a custom field must hold its type.'),
  })
  .meta({ id: 'UpsertContact' });

export const ContactIdentitySchema = z
  .object({
    channel: Channel,
    address: z.string(),
    consent: Consent,
    verified: z.boolean(),
    isPrimary: z.boolean(),
    suppression: z
      .object({ reason: z.enum(SUPPRESSION_REASONS), detail: z.string().nullable(), messageId: z.uuid().nullable(), createdAt: z.iso.datetime() })
      .optional()
      .describe('On GET /contacts/:id, when the address is on the suppression list: why (detail: the provider\'s words when a delivery refusal added it)'),
  })
  .meta({ id: 'ContactIdentity' });

export const ContactSchema = z
  .object({
    id: z.uuid(),
    attributes: z.record(z.string(), z.unknown()),
    createdAt: z.iso.datetime(),
    identities: z.array(ContactIdentitySchema).describe('Included in lists so a row can be shown without another call'),
  })
  .meta({ id: 'Contact' });

export const ContactListSchema = z
  .object({ data: z.array(ContactSchema), total: z.int(), page: z.int(), pageSize: z.int() })
  .meta({ id: 'ContactList' });

const Named = z.object({ id: z.uuid(), name: z.string() });

export const ContactDetailSchema = z
  .object({
    id: z.uuid(),
    attributes: z.record(z.string(), z.unknown()),
    createdAt: z.iso.datetime(),
    identities: z.array(ContactIdentitySchema),
    tags: z.array(Named),
    lists: z.array(Named),
  })
  .meta({ id: 'ContactDetail' });

export const ContactUpsertedSchema = z
  .object({
    id: z.uuid(),
    created: z.boolean(),
    identitiesAdded: z.int(),
    warnings: z.array(z.string()).optional().describe('Values that were ignored, and why; absent when none'),
  })
  .meta({ id: 'ContactUpserted' });

export const ContactParams = z.object({ id: z.uuid() });

const many = (item: z.ZodType<string>) =>
  z.union([item, z.array(item)]).transform((value) => (Array.isArray(value) ? value : [value]));

export const ContactListQuery = z
  .object({
    // The listing's OFFSET is a PostgreSQL integer: past this page, with the largest pageSize, it would overflow (a 500).
    page: z.coerce.number().int().min(1).max(10_000_000).default(1),
    pageSize: z.coerce.number().int().min(1).max(200).default(50),
    address: z.string().min(1).max(320).optional().describe('An identity address, matched in its normalised form'),
    channel: Channel.optional().describe('With address: only identities on this channel'),
    tagId: z.uuid().optional(),
    listId: z.uuid().optional(),
    segmentId: z.uuid().optional().describe('Only contacts the segment matches now'),
    attribute: many(z.string().regex(/^[^:]+:/, 'Expected key:value'))
      .optional()
      .describe('key:value, repeatable; equality on the text form of the value (score:5, vip:true)'),
    q: z.string().min(1).max(200).optional().describe('Case-insensitive text in an address, firstName, lastName or name'),
  });

export const ContactTagsBody = z
  .object({
    tags: z.array(text(100)).min(1).max(100).describe('Tag ids, or names (case-insensitive; created when adding)'),
  })
  .meta({ id: 'ContactTags' });

export const ContactTagsAddedSchema = z
  .object({ added: z.int().describe('Tags the contact did not have before'), tags: z.array(Named).describe('The contact\'s tags now') })
  .meta({ id: 'ContactTagsAdded' });

export const ContactTagsRemovedSchema = z
  .object({ removed: z.int(), tags: z.array(Named).describe('The contact\'s tags now') })
  .meta({ id: 'ContactTagsRemoved' });

export const ContactDeletedSchema = z
  .object({
    deleted: z.literal(true),
    id: z.uuid(),
    suppressed: z.int().describe('Addresses kept on the suppression list (reason erased), so they are not re-added by accident'),
  })
  .meta({ id: 'ContactDeleted' });

export const JourneyQuery = z
  .object({
    limit: z.coerce.number().int().min(1).max(100).default(50),
    cursor: z.string().min(1).max(400).optional().describe('The nextCursor of the previous page: the entries after it, with no repeat or gap'),
    before: z.iso.datetime({ offset: true }).optional().describe('Only entries strictly before this moment (ignored with cursor; entries sharing the moment are not split reliably: prefer cursor)'),
  });

export const ContactJourneyEntrySchema = z
  .object({
    type: z.enum(['message_sent', 'email_received', 'touch', 'conversion', 'note', 'enrollment']),
    at: z.iso.datetime(),
    kind: z
      .string()
      .nullable()
      .optional()
      .describe(
        'message_sent: transactional, campaign or automation; touch: the clicked message\'s kind, event (a behavioural event) or analytics (a visit the analytics sync brought); conversion: the kind its last touch credits (attributedKind); note: automation',
      ),
    name: z.string().optional().describe('touch: the event name (or the conversion an analytics visit led to); conversion: its name'),
    test: z.boolean().describe('conversion: a store\'s test order (shown here, left out of every report); false on every other entry'),
    events: z
      .object({
        openedHuman: z.int(),
        openedMachine: z.int(),
        clicks: z.int(),
        contentClicks: z.int(),
        links: z.array(z.string()).describe('Distinct clicked URLs'),
        lastLinkUrl: z.string().nullable(),
        bounced: z.boolean(),
        unsubscribed: z.boolean(),
      })
      .optional()
      .describe('message_sent by email: the engagement summary of the message'),
    campaignId: z.uuid().nullable().optional().describe('message_sent of a campaign; touch and conversion: the campaign credited'),
    campaignName: z.string().nullable().optional().describe('message_sent of a campaign'),
    url: z.string().optional().describe('touch (a click): the clicked link\'s canonical URL'),
    isContent: z.boolean().optional().describe('touch (a click): a content link (not the logo, images, header/footer or social)'),
    utmSource: z.string().nullable().optional().describe('touch and conversion: utm_source of the link (null when it carried none: a click is a touch all the same)'),
    utmMedium: z.string().nullable().optional(),
    utmCampaign: z.string().nullable().optional(),
    conversionId: z.uuid().optional().describe('conversion, and the analytics touch it carried'),
    conversionSource: z.enum(['event', 'order', 'analytics']).optional().describe('conversion: where it was recorded from'),
    valueCents: z.int().optional().describe('conversion'),
    currency: z.string().nullable().optional().describe('conversion'),
    touchpoints: z.int().optional().describe('conversion: touches in its lookback window'),
    orderId: z.uuid().optional().describe('conversion of an order'),
    phase: z.enum(['entered', 'current', 'exited']).optional().describe('enrollment: entered, where it stands now (active only), or exited'),
    enrollmentId: z.uuid().optional(),
    automationId: z.uuid().nullable().optional(),
    automationName: z.string().optional(),
    status: z.string().nullable().optional().describe('enrollment: active, completed or exited; message_sent: the message status; conversion of an order: placed, fulfilled or cancelled; note of kind automation: skipped'),
    skipReason: z
      .string()
      .optional()
      .describe('note of kind automation: why the journey skipped its message step (suppressed, no_reachable_identity, no_sender, outside_whatsapp_window, quota_exceeded, ...)'),
    nodeId: z.string().nullable().optional().describe('enrollment (current), message_sent and note (skipped step): the journey node'),
    nodeType: z.string().nullable().optional(),
    nodeLabel: z.string().nullable().optional().describe('The node\'s label; for a message step, the email subject'),
    exitReason: z.string().nullable().optional().describe('enrollment (exited): completed, exit_node, goal_reached, manual, archived'),
    messageId: z.uuid().nullable().optional().describe('message_sent; touch (a click) and conversion: the message clicked or credited'),
    channel: z.string().optional().describe('message_sent'),
    subject: z.string().nullable().optional().describe('message_sent and email_received'),
    to: z
      .object({
        address: z.string(),
        displayName: z.string().nullable(),
        domainKind: z.string().describe('custom: the workspace\'s own verified domain (every inbox lives on one)'),
      })
      .optional()
      .describe('email_received: the inbox the contact wrote to'),
    inboxId: z.uuid().optional().describe('email_received'),
    threadId: z.uuid().nullable().optional().describe('email_received'),
    inboxMessageId: z.uuid().optional().describe('email_received'),
  })
  .loose()
  .meta({ id: 'ContactJourneyEntry' });

export const ContactJourneySchema = z
  .object({
    data: z.array(ContactJourneyEntrySchema),
    nextCursor: z.string().nullable().describe('Pass as cursor for the next (older) page; null at the end'),
  })
  .meta({ id: 'ContactJourney' });

export type UpsertContactInput = z.infer<typeof UpsertContactBody>;
export type ContactListInput = z.infer<typeof ContactListQuery>;
