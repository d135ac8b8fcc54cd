import { z } from 'zod';
import { MAILBOX_PATTERN, offset, SINGLE_LINE_PATTERN, text } from '../http/formats';
import { MAX_MAILBOX_CHARS } from '../../core/addresses';
import { MAX_HOLDOUT_PERCENT } from '../../core/campaign-holdout';
import { CAMPAIGN_STATUSES } from '../../core/campaigns';
import { CHANNELS } from '../../core/identities';
import { TEMPLATE_LIMITS } from '../../core/templates/content';
import { AttachmentSourcesSchema } from '../http/attachment-source-schemas';

const mailbox = z.string().min(1).max(MAX_MAILBOX_CHARS, `At most ${MAX_MAILBOX_CHARS} characters per address`).meta({ pattern: MAILBOX_PATTERN });
// A subject with a line break would start a new header.
const subject = z
  .string()
  .min(1)
  .max(TEMPLATE_LIMITS.subject.max)
  .refine((value) => !/[\r\n]/.test(value), 'May not contain line breaks')
  .meta({ pattern: SINGLE_LINE_PATTERN });

const draftFields = {
  listId: z.uuid().nullable().optional().describe('The static list to send to (or segmentId); giving one clears the other'),
  segmentId: z.uuid().nullable().optional().describe('The segment to send to, evaluated when the campaign starts'),
  fromAddress: mailbox.nullable().optional().describe('<address> or <Name> <address> on a verified domain (checked at send)'),
  subject: subject.nullable().optional().describe('Required to send unless the template supplies one. Liquid, rendered per contact as html is'),
  html: z
    .string()
    .nullable()
    .optional()
    .describe(
      'The body; or text alone, or templateId. Liquid rendered per contact as a template is ({{ first_name }}, {{ contact.email }}, ' +
        '{{ unsubscribe_url }}); content that does not parse is 422 template_invalid naming the field',
    ),
  text: z.string().nullable().optional().describe('Plain-text part (Liquid, as html); derived from the rendered html when absent'),
  templateId: z
    .string()
    .min(1)
    .max(TEMPLATE_LIMITS.name.max)
    .nullable()
    .optional()
    .describe('Template id or name instead of html; its current version is pinned at send, and each message renders it with `contact` (attributes, id, email)'),
  replyTo: z.union([mailbox, z.array(mailbox).min(1).max(10)]).nullable().optional(),
  attachments: AttachmentSourcesSchema.optional().describe('Files every recipient receives, stored once when declared'),
  disableTracking: z.boolean().optional(),
  disableUtm: z.boolean().optional(),
  sendAtLocalTime: z
    .string()
    .regex(/^([01]\d|2[0-3]):[0-5]\d$/, 'A time of day as HH:MM (00:00 to 23:59)')
    .nullable()
    .optional()
    .describe(
      "Each recipient gets the campaign at this time of day in their own zone (the contact's `timezone` attribute, an IANA name, " +
        "else the workspace's zone): the first such moment at or after the send time. null sends to everyone at once",
    ),
  channel: z
    .enum(CHANNELS)
    .optional()
    .describe(
      'The preferred channel (email unless set). whatsapp and telegram need the workspace\'s integration (422 naming the field otherwise); ' +
        'their message is text (or html as plain text), templateId (its channelText override, else its plain text), or (whatsapp) contentSid',
    ),
  fallbackChain: z
    .array(z.enum(CHANNELS))
    .max(2)
    .meta({ uniqueItems: true })
    .optional()
    .describe('Channels tried after `channel`, in order, each once and not `channel` itself: each contact is sent on the first that reaches it when the campaign starts (docs/campaigns.md)'),
  contentSid: z
    .string()
    .regex(/^HX[0-9a-fA-F]{32}$/)
    .nullable()
    .optional()
    .describe('whatsapp: an approved Twilio content template, sent to every WhatsApp recipient whether or not they wrote within 24 hours'),
  contentVariables: z
    .record(z.string().regex(/^[A-Za-z0-9_]{1,64}$/), z.string().max(1024))
    .nullable()
    .optional()
    .describe('whatsapp: the content template\'s variables ({"1": "Ann"})'),
  holdoutPercent: z
    .int()
    .min(0)
    .max(MAX_HOLDOUT_PERCENT)
    .optional()
    .describe(
      'Percent of the audience held out of the send (0 to 50, 0 unless set), picked at random per contact when the campaign starts; ' +
        'GET /campaigns/:id/lift compares the conversions of those sent to with those held out',
    ),
};

const oneAudience = {
  check: (body: { listId?: string | null; segmentId?: string | null }) => !(body.listId && body.segmentId),
  message: { message: 'Give listId or segmentId, not both', path: ['segmentId'] },
  /** The same rule in the document: not both given as ids (one may be null). */
  bothGiven: { required: ['listId', 'segmentId'], properties: { listId: { type: 'string' }, segmentId: { type: 'string' } } },
};

/** What the schema cannot say, answered 422 naming the field (the SendMessage document does the same). */
const CHANNEL_RULES =
  'Not expressed here, answered 422 naming the field: each chat channel of `channel` and `fallbackChain` needs the workspace\'s integration; ' +
  '`fallbackChain` may not repeat `channel`; `contentSid` only with whatsapp among the channels.';

export const CreateCampaignBody = z
  .object({ name: text(200), ...draftFields })
  .refine(oneAudience.check, oneAudience.message)
  .meta({ id: 'CreateCampaign', not: oneAudience.bothGiven, description: CHANNEL_RULES });

export const UpdateCampaignBody = z
  .object({ name: text(200).optional(), ...draftFields })
  .refine(oneAudience.check, oneAudience.message)
  .meta({ id: 'UpdateCampaign', not: oneAudience.bothGiven, description: CHANNEL_RULES });

export type CreateCampaignInput = z.infer<typeof CreateCampaignBody>;
export type UpdateCampaignInput = z.infer<typeof UpdateCampaignBody>;

export const SendCampaignBody = z
  .object({
    confirmationToken: z.string().min(1).max(200).optional().describe('From POST /campaigns/:id/estimate; required to send now or within 5 minutes'),
    scheduledAt: z.iso.datetime({ offset: true }).optional().describe('When to send; absent (or past) sends now'),
  })
  .meta({ id: 'SendCampaign' });

export const CampaignParams = z.object({ id: z.uuid() });

export const CampaignListQuery = z.object({
  metrics: z.enum(['1', '0', 'true', 'false']).optional().describe('1 adds each campaign\'s metrics'),
  limit: z.coerce.number().int().min(1).max(100).default(50),
  offset: offset(),
});

const rate = z.number().min(0).max(1).nullable();

export const CampaignMetricsSummarySchema = z
  .object({
    recipients: z.int(),
    delivered: z.int(),
    uniqueOpens: z.int().describe('Messages with at least one human open'),
    uniqueClicks: z.int().describe('Messages with at least one human click'),
    contentClicks: z.int().describe('Human clicks on content links (not logo, images, header or footer, social)'),
    unsubscribes: z.int(),
    hardBounces: z.int(),
    softBounces: z.int(),
    openRate: rate.describe('uniqueOpens / delivered'),
    clickRate: rate.describe('uniqueClicks / delivered'),
    clickToOpenRate: rate.describe('uniqueClicks / uniqueOpens'),
    unsubscribeRate: rate.describe('unsubscribes / delivered'),
    bounceRate: rate.describe('(hardBounces + softBounces) / messages sent'),
  })
  .meta({ id: 'CampaignMetricsSummary' });

export const CampaignProgressSchema = z
  .object({
    recipients: z.int(),
    sent: z.int().describe('Handed to the provider'),
    failed: z.int(),
    canceled: z.int(),
    ratePerSecond: z.number().nullable().describe('Sends per second since the campaign started'),
    expectedEndAt: z.iso.datetime().nullable().describe('At that rate, while it sends'),
  })
  .meta({ id: 'CampaignProgress' });

export const CampaignSchema = z
  .object({
    id: z.uuid(),
    name: z.string(),
    status: z.enum(CAMPAIGN_STATUSES),
    listId: z.uuid().nullable(),
    segmentId: z.uuid().nullable(),
    scheduledAt: z.iso.datetime().nullable(),
    completedAt: z.iso.datetime().nullable(),
    recipientCount: z.int().describe('Recipients of the audience snapshot sent to, the holdout left out (0 before it is taken)'),
    holdoutPercent: z.int().describe('Percent of the audience held out of the send (0: none)'),
    channel: z.enum(CHANNELS).describe('The preferred channel; fallbackChain (on the detail) the ones tried after it'),
    createdAt: z.iso.datetime(),
    metrics: CampaignMetricsSummarySchema.nullable().optional().describe('With ?metrics=1 (always on a single campaign); null without messages'),
  })
  .meta({ id: 'Campaign' });

export const CampaignDetailSchema = CampaignSchema.extend({
  fromAddress: z.string().nullable(),
  subject: z.string().nullable(),
  html: z.string().nullable(),
  text: z.string().nullable(),
  templateId: z.uuid().nullable(),
  replyTo: z.array(z.string()),
  attachments: z.array(z.object({ id: z.string(), filename: z.string(), contentType: z.string(), size: z.int() })),
  disableTracking: z.boolean(),
  disableUtm: z.boolean(),
  sendAtLocalTime: z.string().nullable(),
  fallbackChain: z.array(z.enum(CHANNELS)),
  contentSid: z.string().nullable(),
  contentVariables: z.record(z.string(), z.string()).nullable(),
  skipped: z
    .object({
      noReachableIdentity: z.int().nullable().describe('Members no channel of the campaign reaches (no address, opted out, suppressed), counted when it starts; null before'),
      outsideWhatsAppWindow: z.int().describe('WhatsApp recipients of free-form content who had not written within 24 hours when their turn came'),
    })
    .describe('Members of the audience who got no message, by reason'),
  pausedReason: z.string().nullable().describe('Why the campaign paused itself (bounce or complaint rate); null for a pause by request'),
  failureReason: z.string().nullable(),
  startedAt: z.iso.datetime().nullable(),
  updatedAt: z.iso.datetime(),
  progress: CampaignProgressSchema.nullable(),
}).meta({ id: 'CampaignDetail' });

export const CampaignListSchema = z
  .object({ campaigns: z.array(CampaignSchema), total: z.int(), limit: z.int(), offset: z.int() })
  .meta({ id: 'CampaignList' });

export const CampaignEstimateSchema = z
  .object({
    estimate: z.object({
      listMembers: z.int().describe('Members of the list or segment'),
      recipients: z.int().describe('Those the campaign sends to: reached on one of its channels (a primary identity, not opted out, not suppressed), not held out'),
      heldOut: z.int().describe('Those it could reach but its holdout keeps out (the same people the send will hold out, if the audience stays as it is)'),
      excluded: z.int().describe('Members it cannot reach (listMembers − recipients − heldOut)'),
      byChannel: z
        .object({ email: z.int(), whatsapp: z.int(), telegram: z.int() })
        .describe('The recipients by the channel each goes out on: the first of channel and fallbackChain that reaches the contact'),
      noAddress: z
        .int()
        .describe('Members with no usable identity on any channel of the campaign (part of excluded): none, opted out, or (chat) not verified and opted in'),
      sample: z.array(z.string()).max(5),
    }),
    confirmationToken: z.string().describe('Valid 10 minutes, for the campaign as it is now: an edit voids it'),
  })
  .meta({ id: 'CampaignEstimate' });

export const CampaignSendResultSchema = z
  .object({
    id: z.uuid(),
    status: z.enum(CAMPAIGN_STATUSES),
    scheduledAt: z.iso.datetime().nullable(),
    recipients: z.int().describe('Recipients now (the holdout left out); the snapshot taken when it starts is recipientCount'),
  })
  .meta({ id: 'CampaignSendResult' });
