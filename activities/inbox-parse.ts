import EmailReplyParser from 'email-reply-parser';
import { convert } from 'html-to-text';
import { type AddressObject, simpleParser } from 'mailparser';
import { type MimeDefect, mimeDefects } from '../core/inbox/mime-defects';
import { parseMessageIds } from '../core/inbox/threading';

/** An inbound message as the workflow stores it: what mailparser could read, and what it could not. */
export interface ParsedInbound {
  fromAddress: string | null;
  fromName: string | null;
  to: string[];
  cc: string[];
  subject: string | null;
  html: string | null;
  text: string | null;
  /** The new text of a reply, without the quoted history and signature (email-reply-parser). */
  replyText: string | null;
  /** Normalized ids without brackets. */
  messageId: string | null;
  inReplyTo: string | null;
  references: string[];
  attachments: ParsedAttachment[];
  defects: InboundDefect[];
}

/** Why a message is stored `malformed`: its MIME shape, or its raw bytes gone from the blob store. */
export type InboundDefect = MimeDefect | 'raw_missing';

export interface ParsedAttachment {
  filename: string | null;
  contentType: string;
  contentId: string | null;
  inline: boolean;
  content: Buffer;
}

const addressesOf = (field: AddressObject | AddressObject[] | undefined): string[] =>
  (Array.isArray(field) ? field : field ? [field] : [])
    .flatMap((object) => object.value)
    .flatMap(function flat(entry): string[] {
      // A group (`Team: a@x, b@x;`) holds its members.
      return entry.group ? entry.group.flatMap(flat) : entry.address ? [entry.address.toLowerCase()] : [];
    });

/**
 * The reply text of a message: its plain text (or its HTML as text) with the quoted history and the
 * signature removed. email-reply-parser knows Gmail's "On … wrote:", Outlook's "From: … Sent:" block and
 * Apple Mail's quoted "On …, at …, … wrote:"; when it leaves nothing (a message that is all quote), the text
 * itself is kept.
 */
export function replyTextOf(text: string | null, html: string | null): string | null {
  const source = text?.trim() ? text : html ? convert(html, { wordwrap: false }) : '';
  if (!source.trim()) return null;
  const reply = new EmailReplyParser().parseReply(source).trim();
  return reply || source.trim();
}

/**
 * Parses a raw message. Never throws for what the sender wrote: mailparser reads what it can, a failure of
 * the parser itself leaves only what the header block says, and either way the shape's defects are kept.
 */
export async function parseInboundMail(raw: Buffer): Promise<ParsedInbound> {
  const parsed = await simpleParser(raw, { skipImageLinks: true, skipTextLinks: true }).catch(() => null);
  const from = parsed?.from?.value.find((entry) => entry.address) ?? null;
  const html = parsed && typeof parsed.html === 'string' ? parsed.html : null;
  const text = parsed?.text ?? null;
  const references = Array.isArray(parsed?.references) ? parsed.references : parsed?.references ? [parsed.references] : [];
  return {
    fromAddress: from?.address?.toLowerCase() ?? null,
    fromName: from?.name || null,
    to: addressesOf(parsed?.to),
    cc: addressesOf(parsed?.cc),
    subject: parsed?.subject ?? null,
    html,
    text,
    replyText: replyTextOf(text, html),
    messageId: parseMessageIds(parsed?.messageId)[0] ?? null,
    inReplyTo: parseMessageIds(parsed?.inReplyTo)[0] ?? null,
    references: references.flatMap((value) => parseMessageIds(value)),
    attachments: (parsed?.attachments ?? []).map((attachment) => ({
      filename: attachment.filename ?? null,
      contentType: attachment.contentType || 'application/octet-stream',
      contentId: attachment.cid ?? null,
      inline: attachment.contentDisposition === 'inline',
      content: attachment.content,
    })),
    defects: [...(parsed ? [] : ['unparseable' as const]), ...mimeDefects(raw, from?.address ?? null)].filter((defect, index, all) => all.indexOf(defect) === index),
  };
}
