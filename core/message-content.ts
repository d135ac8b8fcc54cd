import { z } from 'zod';
import { isMarketing } from './list-unsubscribe';

/**
 * What a message says, per channel: the one typed content model that acceptance writes and the send path
 * reads (a message row's `content`). Each channel has its schema here; the channel column says which
 * applies.
 */
export const AttachmentRefSchema = z.object({
  id: z.string(),
  filename: z.string(),
  contentType: z.string(),
  size: z.number().int().nonnegative(),
  contentId: z.string().optional(),
});

/**
 * The next channel of a fallback chain, made ready at acceptance (so its checks answered then): the
 * message row it becomes when the message before it fails for good (db/repositories/message-fallback.ts).
 * Its attachments are the failed message's own, carried over.
 */
export const FallbackStepSchema = z.object({
  channel: z.enum(['email', 'whatsapp', 'telegram']),
  to: z.array(z.string()).min(1),
  fromAddress: z.string().nullable(),
  subject: z.string().nullable(),
  templateId: z.string().nullable(),
  content: z.record(z.string(), z.unknown()),
});

export type FallbackStep = z.infer<typeof FallbackStepSchema>;

/** Every channel's content carries the rest of its fallback chain, and the message it is the fallback of. */
const fallbackFields = {
  fallback: z.array(FallbackStepSchema).default([]),
  fallbackOf: z.string().optional(),
};

export const EmailContentSchema = z.object({
  ...fallbackFields,
  html: z.string().optional(),
  text: z.string().optional(),
  /** The template version pinned at acceptance, so a later edit of the template cannot change the message. */
  templateVersionId: z.string().optional(),
  variables: z.record(z.string(), z.unknown()).optional(),
  /** Formatted mailboxes (`Name <a@x>`). */
  replyTo: z.array(z.string()).default([]),
  attachments: z.array(AttachmentRefSchema).default([]),
  disableTracking: z.boolean().default(false),
  disableUtm: z.boolean().default(false),
  /**
   * A transactional send that asked for the one-click unsubscribe (POST /emails `listUnsubscribe`): it gets
   * the List-Unsubscribe headers and `{{ unsubscribe_url }}` as marketing mail always does.
   */
  listUnsubscribe: z.boolean().default(false),
  /** utm_campaign of the links: the campaign's or automation's name, set by their sends; transactional sends leave it out. */
  utmCampaign: z.string().optional(),
  /**
   * An inbox reply's threading (core/inbox/replies.ts): bare Message-IDs that the render writes as the
   * In-Reply-To and References headers. The only headers content may set: a body never sets headers.
   */
  inReplyTo: z.string().optional(),
  references: z.array(z.string()).optional(),
});

export type EmailContent = z.infer<typeof EmailContentSchema>;

/** Whether a message carries the one-click unsubscribe (headers and `{{ unsubscribe_url }}`): marketing mail always, transactional mail when asked. */
export function carriesUnsubscribe(kind: string, content: { listUnsubscribe?: boolean }): boolean {
  return isMarketing(kind) || content.listUnsubscribe === true;
}

/**
 * Whether a message's own subject, html and text render as Liquid with its variables, exactly as a
 * template's would (docs/templates-and-attachments.md): always for marketing mail (a campaign's contact,
 * the unsubscribe link), and for a transactional send that gives `variables` or asks for the unsubscribe
 * link. Any other transactional content goes out as written, so braces in a body that never asked to be
 * personalized (a code sample) stay literal.
 */
export function personalized(kind: string, content: { listUnsubscribe?: boolean; variables?: Record<string, unknown> }): boolean {
  return carriesUnsubscribe(kind, content) || content.variables !== undefined;
}
export type EmailContentInput = z.input<typeof EmailContentSchema>;

/**
 * What a chat message (WhatsApp, Telegram) says: its own text, or the template version pinned at acceptance
 * (rendered with `variables`: the channel's `channelText` override, else the plain text derived from the
 * template). Attachments go as media (WhatsApp, fetched by Twilio from a signed URL) or as documents and
 * photos (Telegram).
 */
const chatContentFields = {
  ...fallbackFields,
  text: z.string().optional(),
  templateVersionId: z.string().optional(),
  variables: z.record(z.string(), z.unknown()).optional(),
  attachments: z.array(AttachmentRefSchema).default([]),
};

export const TelegramContentSchema = z.object(chatContentFields);

export const WhatsAppContentSchema = z.object({
  ...chatContentFields,
  /**
   * An approved Twilio content template (`HX…`), which WhatsApp delivers at any time; free-form text only
   * goes within 24 hours of the customer's last message.
   */
  contentSid: z.string().optional(),
  contentVariables: z.record(z.string(), z.string()).optional(),
});

export type TelegramContent = z.infer<typeof TelegramContentSchema>;
export type WhatsAppContent = z.infer<typeof WhatsAppContentSchema>;
export type ChatContent = TelegramContent | WhatsAppContent;
export type ChatContentInput = z.input<typeof WhatsAppContentSchema>;

export const CONTENT_SCHEMAS = { email: EmailContentSchema, whatsapp: WhatsAppContentSchema, telegram: TelegramContentSchema } as const;

export type ContentChannel = keyof typeof CONTENT_SCHEMAS;

/** A stored email message's content, checked: a row that does not match is a fault of ours, named here. */
export function emailContentOf(content: unknown): EmailContent {
  const parsed = EmailContentSchema.safeParse(content);
  if (!parsed.success) throw new Error(`message content is not email content: ${parsed.error.issues.map((issue) => issue.path.join('.')).join(', ')}`);
  return parsed.data;
}

function checked<T>(schema: z.ZodType<T>, channel: string, content: unknown): T {
  const parsed = schema.safeParse(content);
  if (!parsed.success) throw new Error(`message content is not ${channel} content: ${parsed.error.issues.map((issue) => issue.path.join('.')).join(', ')}`);
  return parsed.data;
}

export function whatsAppContentOf(content: unknown): WhatsAppContent {
  return checked(WhatsAppContentSchema, 'whatsapp', content);
}

export function telegramContentOf(content: unknown): TelegramContent {
  return checked(TelegramContentSchema, 'telegram', content);
}

/**
 * What a message rendered to, stored on its row so every attempt sends the same thing: an email's subject,
 * parts and headers, or a chat message's text. Chat renders carry their channel; email renders (stored
 * before chat channels existed) do not.
 */
export interface RenderedChat {
  channel: 'whatsapp' | 'telegram';
  /** Null when the message is attachments only, or a WhatsApp content template (Twilio fills it in). */
  text: string | null;
  templateVersionId: string | null;
}

export function isRenderedChat(rendered: object): rendered is RenderedChat {
  const channel = 'channel' in rendered ? rendered.channel : undefined;
  return channel === 'whatsapp' || channel === 'telegram';
}
