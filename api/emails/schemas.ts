import { z } from 'zod';
import { offset } from '../http/formats';
import { TEMPLATE_LIMITS } from '../../core/templates/content';
import { VariablesSchema } from '../../core/variables';
import { AttachmentSourcesSchema } from '../http/attachment-source-schemas';
import { addressList, MailboxSchema, MessageKindSchema, SubjectSchema } from '../http/message-schemas';

export const SendEmailBody = z
  .object({
    to: addressList(50).describe('Recipients; to + cc + bcc together at most 50'),
    from: MailboxSchema.describe('<address> or <Name> <address> on a verified domain'),
    subject: SubjectSchema.optional().describe('Required unless the template supplies it'),
    html: z.string().optional().describe('Required unless templateId (or text alone) is given'),
    text: z.string().optional().describe('Plain-text part; alone (no html, no templateId) the email is text-only'),
    replyTo: addressList(10).optional(),
    cc: addressList(50).optional(),
    bcc: addressList(50).optional(),
    templateId: z.string().min(1).max(TEMPLATE_LIMITS.name.max).optional().describe('Template id (uuid) or name'),
    variables: VariablesSchema.optional().describe(
      'Liquid variables of the template, or of subject, html and text themselves (given variables, they render as a template does; ' +
        'content that does not parse is 422 template_invalid naming the field)',
    ),
    attachments: AttachmentSourcesSchema.optional(),
    idempotencyKey: z.string().min(8).max(255),
    disableTracking: z.boolean().default(false),
    disableUtm: z.boolean().default(false),
    listUnsubscribe: z
      .boolean()
      .default(false)
      .describe(
        'Adds the one-click unsubscribe marketing mail carries: List-Unsubscribe and List-Unsubscribe-Post (RFC 8058) naming the first to ' +
          'recipient, and {{ unsubscribe_url }}, the same link, in subject, html, text or the template (which then render as Liquid)',
      ),
  })
  .refine((body) => body.html !== undefined || body.text !== undefined || body.templateId !== undefined, {
    message: 'Give html, text or templateId',
    path: ['html'],
  })
  .refine((body) => body.subject !== undefined || body.templateId !== undefined, {
    message: 'Required unless the template supplies it',
    path: ['subject'],
  })
  .meta({
    id: 'SendEmail',
    description:
      'Give html, text or templateId, and subject unless templateId is given. Not expressed here: to + cc + bcc together ' +
      'hold at most 50 addresses, and templateId and attachment ids must name the workspace\'s own (422 otherwise).',
    allOf: [
      { anyOf: [{ required: ['html'] }, { required: ['text'] }, { required: ['templateId'] }] },
      { anyOf: [{ required: ['subject'] }, { required: ['templateId'] }] },
    ],
  });

export type SendEmailInput = z.infer<typeof SendEmailBody>;

export const SendEmailBatchBody = z
  .object({
    emails: z.array(z.unknown()).min(1).max(100).describe('Send inputs, each validated on its own'),
  })
  .meta({ id: 'SendEmailBatch' });

const DroppedRecipientSchema = z.object({ address: z.string(), reason: z.string() });

export const SendResultSchema = z
  .object({
    id: z.string(),
    status: z.string().describe('`queued` when accepted, `duplicate` for a repeated idempotencyKey'),
    idempotencyKey: z.string(),
    droppedRecipients: z.array(DroppedRecipientSchema).optional(),
    bodyMismatch: z.boolean().optional().describe('On a duplicate: the repeat carried a different body'),
  })
  .meta({ id: 'SendResult' });

/** A batch item's error codes: the spec's list (Emails and messages, rule 2), and no other. */
export const BATCH_ITEM_CODES = ['validation_error', 'domain_not_verified', 'suppressed', 'template_not_found', 'quota_exceeded', 'too_many_recipients'] as const;

export type BatchItemCode = (typeof BATCH_ITEM_CODES)[number];

export const BatchItemResultSchema = z
  .object({
    index: z.number().int(),
    status: z.enum(['accepted', 'failed']),
    id: z.string().optional(),
    duplicate: z.boolean().optional(),
    droppedRecipients: z.array(DroppedRecipientSchema).optional(),
    error: z
      .object({
        code: z.enum(BATCH_ITEM_CODES).describe('The spec\'s codes only: every other refusal of an item (a bad attachment) is validation_error with its reason in message'),
        message: z.string().optional(),
        resource: z.string().optional().describe('quota_exceeded only, with limit, used, remaining and plan (as the 402 of POST /emails)'),
        limit: z.number().int().optional(),
        used: z.number().int().optional(),
        remaining: z.number().int().optional(),
        plan: z.string().optional(),
      })
      .optional(),
  })
  .meta({ id: 'BatchItemResult' });

export const SendEmailBatchResultSchema = z
  .object({ accepted: z.number().int(), failed: z.number().int(), results: z.array(BatchItemResultSchema) })
  .meta({ id: 'SendEmailBatchResult' });

export const EmailListQuery = z.object({
  status: z.string().optional(),
  kind: MessageKindSchema.optional(),
  campaignId: z.uuid().optional(),
  contactId: z.uuid().optional(),
  to: z.string().optional(),
  from: z.iso.datetime({ offset: true }).optional(),
  until: z.iso.datetime({ offset: true }).optional(),
  limit: z.coerce.number().int().min(1).max(100).default(50),
  offset: offset(),
});

export const EmailParams = z.object({ id: z.uuid() });
