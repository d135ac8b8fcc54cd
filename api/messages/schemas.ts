import { z } from 'zod';
import { MAX_MAILBOX_CHARS } from '../../core/addresses';
import { CHANNELS } from '../../core/identities';
import { TEMPLATE_LIMITS } from '../../core/templates/content';
import { VariablesSchema } from '../../core/variables';
import { AttachmentSourcesSchema } from '../http/attachment-source-schemas';
import { SubjectSchema } from '../http/message-schemas';

/**
 * The unified send (decisions: Unified messages). `to` is read by the channel: an email address, an E.164
 * number (WhatsApp) or a numeric chat id (Telegram). Without `channel`, `contactId` is required and the
 * contact's primary verified identity with consent picks the channel (and `to`, when not given).
 */
export const SendMessageBody = z
  .object({
    channel: z.enum(CHANNELS).optional().describe('Required unless contactId is given'),
    to: z
      .string()
      .min(1)
      .max(MAX_MAILBOX_CHARS)
      .optional()
      .describe('email: an address; whatsapp: E.164 (+14155550100); telegram: a numeric chat id. Required unless contactId is given'),
    contactId: z.uuid().optional().describe('The contact this message is for; without channel (or to), its identities choose'),
    from: z
      .string()
      .min(1)
      .max(MAX_MAILBOX_CHARS)
      .optional()
      .describe(
        'email only: a sender on a verified domain. Absent: the workspace\'s default sender (the defaultFromAddress of the verified ' +
          'domain verified first among those with one); 422 on from when there is none',
      ),
    subject: SubjectSchema.optional().describe('email only'),
    html: z.string().optional().describe('email; chat channels send its plain text'),
    text: z.string().optional().describe('The chat text (shown as written, no markup); the email plain-text part'),
    templateId: z.string().min(1).max(TEMPLATE_LIMITS.name.max).optional().describe('Template id (uuid) or name; chat channels use its channelText override, else its plain text'),
    variables: VariablesSchema.optional(),
    attachments: AttachmentSourcesSchema.optional().describe('email: files; whatsapp: one media file; telegram: photos and documents'),
    contentSid: z
      .string()
      .regex(/^HX[0-9a-fA-F]{32}$/)
      .optional()
      .describe('whatsapp: an approved Twilio content template, sendable outside the 24-hour window'),
    contentVariables: z.record(z.string().regex(/^[A-Za-z0-9_]{1,64}$/), z.string().max(1024)).optional().describe('whatsapp: the content template\'s variables ({"1": "Ann"})'),
    idempotencyKey: z.string().min(8).max(255),
    fallbackChain: z
      .array(
        z.union([
          z.enum(CHANNELS),
          z.object({
            channel: z.enum(CHANNELS),
            to: z.string().min(1).max(MAX_MAILBOX_CHARS).optional().describe('Else the contact\'s primary verified identity on that channel'),
          }),
        ]),
      )
      .min(1)
      .max(2)
      .optional()
      .describe('Channels to try in order when the send fails for good or is undeliverable; each a channel name or { channel, to }'),
    disableTracking: z.boolean().default(false).describe('email only'),
    disableUtm: z.boolean().default(false).describe('email only'),
    listUnsubscribe: z.boolean().default(false).describe('email only: as on POST /emails, the one-click unsubscribe headers and {{ unsubscribe_url }}'),
  })
  .meta({
    id: 'SendMessage',
    description:
      'Not expressed here, answered 422 naming the field: `to` must be of the channel\'s kind (an address, an E.164 ' +
      'number, a chat id); the channel\'s integration must be saved in the workspace; free-form WhatsApp text needs the ' +
      'contact\'s 24-hour window (else contentSid); without channel, the contact must have a verified identity with consent; ' +
      'email follows POST /emails (from on a verified domain, else the default sender; subject unless the template gives one). ' +
      'With a fallbackChain, a recipient suppressed on a channel is sent on the next one (409 only when suppressed on every one).',
  });

export type SendMessageInput = z.infer<typeof SendMessageBody>;

export const MessageAcceptedSchema = z
  .object({
    id: z.uuid(),
    status: z.enum(['queued', 'duplicate']).describe('`queued` when accepted, `duplicate` for a repeated idempotencyKey'),
    channel: z.enum(CHANNELS).optional().describe('The channel the message goes on (on acceptance)'),
    idempotencyKey: z.string(),
    droppedRecipients: z
      .array(z.object({ address: z.string(), reason: z.string() }))
      .optional()
      .describe('Suppressed copies left out; with a fallbackChain, also the addresses of channels skipped because suppressed there'),
    bodyMismatch: z.boolean().optional().describe('On a duplicate: the repeat carried a different body'),
  })
  .meta({ id: 'MessageAccepted' });

export const MessageParams = z.object({ id: z.uuid() });
