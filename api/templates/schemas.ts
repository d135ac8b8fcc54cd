import { z } from 'zod';
import { NOT_BLANK, offset, UUID_SHAPE_PATTERN } from '../http/formats';
import { looksLikeTemplateId, TEMPLATE_CHANNELS, TEMPLATE_FORMATS, TEMPLATE_LIMITS } from '../../core/templates/content';
import { VariablesSchema } from '../../core/variables';

export const TemplateFormatSchema = z
  .enum(TEMPLATE_FORMATS)
  .meta({ id: 'TemplateFormat', description: 'How `body` is written: Markdown, HTML, plain text, or a JSON array of blocks' });

export const TemplateChannelSchema = z.enum(TEMPLATE_CHANNELS).meta({ id: 'TemplateChannel' });

const chatText = z.string().min(1).max(TEMPLATE_LIMITS.channelText.max);

export const ChannelTextSchema = z
  .strictObject({ whatsapp: chatText.optional(), telegram: chatText.optional() })
  .meta({ id: 'ChannelText', description: 'Text overrides for chat channels; without one a chat channel gets the email\'s plain text' });

const name = z
  .string()
  .trim()
  .min(TEMPLATE_LIMITS.name.min)
  .max(TEMPLATE_LIMITS.name.max)
  .refine((value) => !looksLikeTemplateId(value), 'must not be shaped like a uuid: a send names a template by id or by name')
  .describe('Unique in the workspace, whatever the case; a send may use it as templateId. Not shaped like a uuid')
  .meta({ pattern: NOT_BLANK, not: { pattern: UUID_SHAPE_PATTERN } });

const channels = z
  .array(TemplateChannelSchema)
  .min(1)
  .describe('Channels the template serves; email is the primary channel when present');

const subject = z.string().max(TEMPLATE_LIMITS.subject.max).nullable().describe('Email subject (Liquid); null leaves it to the send');

/** A blocks body may be sent as the JSON array itself or as a string holding it; it is stored as a string. */
const body = z
  .union([z.string().min(1).max(TEMPLATE_LIMITS.body.max), z.array(z.record(z.string(), z.unknown())).min(1)])
  .describe('The content in `format`, with Liquid ({{ first_name | default: "there" }}). For blocks, a JSON array of blocks (or a string of it). It must parse: 422 template_invalid names the line and column otherwise.');

export const CreateTemplateBody = z
  .strictObject({
    name,
    channels: channels.default(['email']),
    format: TemplateFormatSchema.default('html'),
    subject: subject.optional(),
    body,
    channelText: ChannelTextSchema.nullable().optional(),
  })
  .meta({
    id: 'CreateTemplate',
    description: 'channelText may only hold text for channels the template serves (channels, ["email"] when absent)',
    allOf: (['whatsapp', 'telegram'] as const).map((channel) => ({
      if: { required: ['channelText'], properties: { channelText: { type: 'object', required: [channel] } } },
      then: { required: ['channels'], properties: { channels: { contains: { const: channel } } } },
    })),
  });

export const UpdateTemplateBody = z
  .strictObject({
    name: name.optional(),
    channels: channels.optional(),
    format: TemplateFormatSchema.optional(),
    subject: subject.optional(),
    body: body.optional(),
    channelText: ChannelTextSchema.nullable().optional(),
  })
  .meta({
    id: 'UpdateTemplate',
    description:
      'Only the fields present change; channelText is replaced as a whole, and may only hold text for channels the template ' +
      'serves: the channels given here, else the stored ones (422 otherwise; the stored channels are not in the request, so ' +
      'the document cannot say it)',
    allOf: (['whatsapp', 'telegram'] as const).map((channel) => ({
      if: { required: ['channelText', 'channels'], properties: { channelText: { type: 'object', required: [channel] } } },
      then: { properties: { channels: { contains: { const: channel } } } },
    })),
  });

export const RenderTemplateBody = z
  .strictObject({
    variables: VariablesSchema.default({}),
    strict: z.boolean().default(false).describe('Refuse (422 template_invalid) when a variable the content uses is missing'),
  })
  .meta({ id: 'RenderTemplate' });

export const TemplateParams = z.object({ id: z.uuid() });

export const TemplateListQuery = z.object({
  limit: z.coerce.number().int().min(1).max(100).default(50),
  offset: offset(),
});

export const TemplateSummarySchema = z
  .object({
    id: z.uuid(),
    name: z.string(),
    channel: TemplateChannelSchema.describe('The primary channel: email when enabled'),
    channels: z.array(TemplateChannelSchema),
    format: TemplateFormatSchema,
    subject: z.string().nullable(),
    variables: z.array(z.string()).describe('The variables the content uses (subject, body, channelText), derived'),
    createdAt: z.iso.datetime(),
    updatedAt: z.iso.datetime(),
  })
  .meta({ id: 'TemplateSummary' });

export const TemplateSchema = TemplateSummarySchema.extend({
  body: z.string(),
  channelText: ChannelTextSchema.nullable(),
}).meta({ id: 'Template' });

export const TemplateListSchema = z.object({ templates: z.array(TemplateSummarySchema) }).meta({ id: 'TemplateList' });

export const TemplateDeletedSchema = z.object({ deleted: z.literal(true), id: z.uuid() }).meta({ id: 'TemplateDeleted' });

export const TemplatePreviewSchema = z
  .object({
    subject: z.string().nullable(),
    html: z.string().nullable().describe('Null for the text format (a text-only email)'),
    text: z.string().describe('The plain-text part: the text body, or derived from the HTML'),
    channelText: ChannelTextSchema.nullable().describe('What each enabled chat channel would receive'),
  })
  .meta({ id: 'TemplatePreview' });

export type CreateTemplateInput = z.infer<typeof CreateTemplateBody>;
export type UpdateTemplateInput = z.infer<typeof UpdateTemplateBody>;
