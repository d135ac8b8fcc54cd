import MailComposer from 'nodemailer/lib/mail-composer';
import { domainOf, formatMailbox } from '../core/addresses';
import type { OutboundEmail } from './email-channel';

/**
 * Builds the RFC 5322 message once, with nodemailer's composer: multipart/alternative for html + text,
 * attachments, inline cid parts. Bcc recipients are given to the provider as envelope recipients and
 * never written into a header (the composer drops Bcc unless asked to keep it).
 */
export async function buildMime(email: OutboundEmail): Promise<Buffer> {
  const composer = new MailComposer({
    from: formatMailbox(email.from),
    to: email.to.map(formatMailbox),
    cc: email.cc.length ? email.cc.map(formatMailbox) : undefined,
    replyTo: email.replyTo.length ? email.replyTo.map(formatMailbox) : undefined,
    subject: email.subject,
    html: email.html,
    text: email.text,
    headers: email.headers,
    messageId: `<${email.messageId}@${domainOf(email.from.address)}>`,
    attachments: email.attachments.map((attachment) => ({
      filename: attachment.filename,
      contentType: attachment.contentType,
      content: attachment.content,
      cid: attachment.contentId,
      contentDisposition: attachment.contentId ? ('inline' as const) : ('attachment' as const),
    })),
  });
  return composer.compile().build();
}

/** Every address the provider must deliver to, bcc included. */
export function envelopeRecipients(email: OutboundEmail): string[] {
  return [...email.to, ...email.cc, ...email.bcc].map((mailbox) => mailbox.address);
}
