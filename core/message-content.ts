import { z } from 'zod';

/**
 * What a message says, per channel: the one typed content model that acceptance writes and the send path
 * reads (a message row's `content`). Each channel has its schema here; the channel column says which
 * applies. WhatsApp and Telegram add theirs with their channels (issue 14).
 */
export const AttachmentRefSchema = z.object({
  id: z.string(),
  filename: z.string(),
  contentType: z.string(),
  size: z.number().int().nonnegative(),
  contentId: z.string().optional(),
});

export const EmailContentSchema = z.object({
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
  /** utm_campaign of the links: the campaign's or automation's name, set by their sends; transactional sends leave it out. */
  utmCampaign: z.string().optional(),
});

export type EmailContent = z.infer<typeof EmailContentSchema>;
export type EmailContentInput = z.input<typeof EmailContentSchema>;

export const CONTENT_SCHEMAS = { email: EmailContentSchema } as const;

export type ContentChannel = keyof typeof CONTENT_SCHEMAS;

/** A stored email message's content, checked: a row that does not match is a fault of ours, named here. */
export function emailContentOf(content: unknown): EmailContent {
  const parsed = EmailContentSchema.safeParse(content);
  if (!parsed.success) throw new Error(`message content is not email content: ${parsed.error.issues.map((issue) => issue.path.join('.')).join(', ')}`);
  return parsed.data;
}
