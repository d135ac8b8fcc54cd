import { z } from 'zod';
import { AttachmentSourcesSchema } from '../http/attachment-source-schemas';
import { addressList, SubjectSchema } from '../http/message-schemas';
import { displayName, offset } from '../http/formats';

/** Bodies of a message written through an inbox: the same bound as a part of POST /emails (under the send body limit). */
const Html = z.string().max(2_000_000).describe('HTML part');
const Text = z.string().max(2_000_000).describe('Plain-text part');
const IdempotencyKey = z
  .string()
  .min(8)
  .max(255)
  .describe('Optional here: a repeat with the same key answers 200 duplicate with the first message. Without one, the same send (inbox, thread, body) repeated within 10 minutes is a duplicate too');

const Folder = z.enum(['inbox', 'sent', 'drafts', 'archived']);

export const InboxParams = z.object({ id: z.uuid() });
export const ThreadParams = z.object({ id: z.uuid(), threadId: z.uuid() });
export const DraftParams = z.object({ id: z.uuid(), draftId: z.uuid() });
export const AttachmentParams = z.object({ id: z.uuid(), messageId: z.uuid(), index: z.coerce.number().int().min(0).max(999) });

export const InboxAttachmentDownloadSchema = z
  .object({
    attachment: z.object({ index: z.number().int(), filename: z.string(), contentType: z.string(), size: z.number().int().nullable() }),
    downloadUrl: z.string().describe('A signed URL, valid 15 minutes'),
    expiresAt: z.iso.datetime(),
  })
  .meta({ id: 'InboxAttachmentDownload' });

export const InboxListQuery = z.object({ limit: z.coerce.number().int().min(1).max(100).default(50), offset: offset() });

export const CreateInboxBody = z
  .object({
    domainId: z.uuid().optional().describe('A verified domain of the workspace (or give its name as domain)'),
    domain: z.string().trim().min(1).max(253).optional().describe('The verified domain\'s name, instead of domainId'),
    localPart: z
      .string()
      .trim()
      .min(1)
      .max(64)
      .regex(/^[A-Za-z0-9!#$%&'*+/=?^_`{|}~-]+(\.[A-Za-z0-9!#$%&'*+/=?^_`{|}~-]+)*$/, 'Letters, digits, dots between characters, and !#$%&\'*+/=?^_`{|}~-')
      .describe('The part before @; one inbox per address whatever its case'),
    displayName: displayName(100).optional().describe('The From name of what the inbox sends (else the domain\'s default)'),
  })
  .refine((body) => (body.domainId === undefined) !== (body.domain === undefined), { message: 'Give domainId or domain, not both', path: ['domainId'] })
  .meta({ id: 'CreateInbox', oneOf: [{ required: ['domainId'] }, { required: ['domain'] }] });

export type CreateInboxInput = z.infer<typeof CreateInboxBody>;

export const UpdateInboxBody = z
  .object({
    displayName: displayName(100).nullable().optional().describe('null clears it (the domain\'s default name applies)'),
    status: z.enum(['active', 'disabled']).optional().describe('disabled: mail to it is refused with 550, and it cannot send'),
  })
  .meta({ id: 'UpdateInbox' });

export const InboxSchema = z
  .object({
    id: z.uuid(),
    localPart: z.string(),
    address: z.string(),
    displayName: z.string().nullable(),
    status: z.enum(['active', 'disabled']),
    domainId: z.uuid(),
    inboundEnabled: z.boolean().describe('Whether the domain receives mail (POST /domains/:id/inbound); without it the inbox only sends'),
    createdAt: z.iso.datetime(),
  })
  .meta({ id: 'Inbox' });

export type InboxView = z.infer<typeof InboxSchema>;
export const InboxListSchema = z.object({ inboxes: z.array(InboxSchema) }).meta({ id: 'InboxList' });
export const InboxEnvelopeSchema = z.object({ inbox: InboxSchema }).meta({ id: 'InboxEnvelope' });

export const SendInboxBody = z
  .object({
    to: addressList(50),
    cc: addressList(50).optional(),
    bcc: addressList(50).optional(),
    subject: SubjectSchema,
    html: Html.optional(),
    text: Text.optional(),
    attachments: AttachmentSourcesSchema.optional(),
    idempotencyKey: IdempotencyKey.optional(),
  })
  .refine((body) => body.html !== undefined || body.text !== undefined, { message: 'Give html or text', path: ['html'] })
  .meta({ id: 'InboxSend', anyOf: [{ required: ['html'] }, { required: ['text'] }] });

export type SendInboxInput = z.infer<typeof SendInboxBody>;

export const ReplyBody = z
  .object({
    html: Html.optional(),
    text: Text.optional(),
    replyAll: z.boolean().default(false).describe('Also to the answered message\'s other To and Cc recipients (never the inbox itself)'),
    quote: z.boolean().default(false).describe('Quote the answered message below the answer'),
    to: addressList(50).optional().describe('Instead of the computed recipients'),
    cc: addressList(50).optional().describe('Instead of the computed copies'),
    bcc: addressList(50).optional(),
    attachments: AttachmentSourcesSchema.optional(),
    idempotencyKey: IdempotencyKey.optional(),
  })
  .refine((body) => body.html !== undefined || body.text !== undefined, { message: 'Give html or text', path: ['html'] })
  .meta({ id: 'InboxReply', anyOf: [{ required: ['html'] }, { required: ['text'] }] });

export type ReplyInput = z.infer<typeof ReplyBody>;

export const CreateDraftBody = z
  .object({
    threadId: z.uuid().optional().describe('A reply draft of this thread; without it, a new conversation (a thread in folder drafts)'),
    to: addressList(50, 0).optional(),
    cc: addressList(50, 0).optional(),
    bcc: addressList(50, 0).optional(),
    subject: SubjectSchema.optional(),
    html: Html.optional(),
    text: Text.optional(),
    attachments: AttachmentSourcesSchema.optional(),
  })
  .meta({ id: 'InboxDraft' });

export type CreateDraftInput = z.infer<typeof CreateDraftBody>;

export const UpdateDraftBody = z
  .object({
    to: addressList(50, 0).optional().describe('Replaces the draft\'s to ([] empties it)'),
    cc: addressList(50, 0).optional(),
    bcc: addressList(50, 0).optional(),
    subject: SubjectSchema.nullable().optional().describe('null clears it (a reply draft then answers with "Re: " and the thread\'s subject)'),
    html: Html.nullable().optional().describe('null clears it'),
    text: Text.nullable().optional().describe('null clears it'),
    attachments: AttachmentSourcesSchema.optional().describe('Replaces the draft\'s files ([] removes them)'),
  })
  .meta({ id: 'InboxDraftUpdate' });

export type UpdateDraftInput = z.infer<typeof UpdateDraftBody>;

export const DraftCreatedSchema = z.object({ draftId: z.uuid(), threadId: z.uuid() }).meta({ id: 'DraftCreated' });

export const InboxSendResultSchema = z
  .object({
    id: z.uuid().describe('The inbox message'),
    threadId: z.uuid(),
    messageId: z.uuid().describe('The send (GET /emails/:id shows its delivery and events)'),
    status: z.enum(['queued', 'duplicate']),
    droppedRecipients: z.array(z.object({ address: z.string(), reason: z.string() })).optional(),
  })
  .meta({ id: 'InboxSendResult' });

export const ThreadListQuery = z.object({
  folder: Folder.default('inbox'),
  limit: z.coerce.number().int().min(1).max(100).default(50),
  cursor: z.string().max(200).optional().describe('nextCursor of the previous page'),
});

export const ThreadDetailQuery = z.object({
  html: z
    .enum(['sanitized', 'raw'])
    .default('sanitized')
    .describe('Received messages\' html: sanitized (scripts, handlers, remote images and styles that load anything removed; docs/inboxes.md), or raw as received'),
});

export const UpdateThreadBody = z
  .object({ folder: z.enum(['inbox', 'sent', 'archived']).describe('archived to archive, inbox (or sent) to unarchive; drafts is kept by the service') })
  .meta({ id: 'UpdateThread' });

export const ThreadSchema = z
  .object({
    id: z.uuid(),
    subject: z.string(),
    folder: Folder,
    participants: z.array(z.string()),
    messageCount: z.number().int(),
    unreadCount: z.number().int(),
    lastMessageAt: z.iso.datetime(),
    createdAt: z.iso.datetime(),
  })
  .meta({ id: 'Thread' });

const AttachmentMetaSchema = z.object({
  id: z.string().nullable(),
  filename: z.string().nullable(),
  contentType: z.string().nullable(),
  size: z.number().int().nullable(),
  contentId: z.string().nullable(),
});

export const EmailMessageSchema = z
  .object({
    id: z.uuid(),
    direction: z.enum(['in', 'out']),
    status: z.string().describe('in: received, processed; out: draft, queued, sent, delivered, bounced, failed'),
    subject: z.string().nullable(),
    from: z.string().nullable(),
    to: z.array(z.string()),
    cc: z.array(z.string()),
    bcc: z.array(z.string()).describe('Ours only; inbound mail shows none'),
    html: z.string().nullable().describe('Received mail: sanitized unless ?html=raw was asked; ours: as written'),
    text: z.string().nullable(),
    replyText: z.string().nullable().describe('Inbound: the new text without the quoted history'),
    messageIdHeader: z.string().nullable(),
    inReplyTo: z.string().nullable(),
    references: z.array(z.string()),
    attachments: z.array(AttachmentMetaSchema),
    auth: z.record(z.string(), z.unknown()).nullable().describe('Inbound: SPF, DKIM and DMARC verdicts'),
    malformed: z.boolean(),
    sendId: z.uuid().nullable().describe('Ours: the send (GET /emails/:id)'),
    createdAt: z.iso.datetime(),
  })
  .meta({ id: 'EmailMessage' });

export type EmailMessageView = z.infer<typeof EmailMessageSchema>;
export type ThreadView = z.infer<typeof ThreadSchema>;

export const ThreadListSchema = z
  .object({ folder: Folder, threads: z.array(ThreadSchema), nextCursor: z.string().nullable() })
  .meta({ id: 'ThreadList' });
export const ThreadDetailSchema = z.object({ thread: ThreadSchema, messages: z.array(EmailMessageSchema) }).meta({ id: 'ThreadDetail' });
export const ThreadEnvelopeSchema = z.object({ thread: ThreadSchema }).meta({ id: 'ThreadEnvelope' });
export const DraftEnvelopeSchema = z.object({ draft: EmailMessageSchema }).meta({ id: 'DraftEnvelope' });

const Day = z.iso.date();
export const InboxMetricsQuery = z.object({
  from: Day.optional().describe('First UTC day (default: 29 days before to)'),
  to: Day.optional().describe('Last UTC day (default: today)'),
});

const Volumes = { received: z.number().int(), sent: z.number().int(), delivered: z.number().int(), bounced: z.number().int() };
export const InboxMetricsSchema = z
  .object({
    from: Day,
    to: Day,
    kpis: z.object({
      ...Volumes,
      deliveryRate: z.number().nullable().describe('delivered / sent, null with nothing sent'),
      bounceRate: z.number().nullable().describe('bounced / sent, null with nothing sent'),
    }),
    daily: z.array(z.object({ day: Day, ...Volumes })),
    perInbox: z.array(z.object({ inboxId: z.uuid(), address: z.string(), ...Volumes })),
  })
  .meta({ id: 'InboxMetrics' });
