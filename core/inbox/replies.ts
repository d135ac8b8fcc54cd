import { type Mailbox, formatMailbox } from '../addresses';
import { sesMessageIdHeader } from './threading';

/**
 * How an inbox answers a message (RFC 5322 §3.6.4): In-Reply-To names the message answered, References is its
 * References followed by its Message-ID, and the subject gets one "Re: ". Pure, so the threading a mail client
 * does on what we send is proven without a server. Ids are bare (`local@domain`, no angle brackets), as
 * `inbox_messages` stores them; `referenceHeaders` adds the brackets for the MIME.
 */

/** The message being answered, as an inbox row holds it. */
export interface AnsweredMessage {
  direction: 'in' | 'out';
  messageIdHeader: string | null;
  references: readonly string[];
  fromAddress: string | null;
  fromName: string | null;
  to: readonly string[];
  cc: readonly string[];
  subject: string | null;
  text: string | null;
  html: string | null;
  createdAt: Date;
  /**
   * False for received mail whose From failed authentication (docs/inboxes.md, authenticated senders); absent
   * for mail received before that mark existed, and for our own.
   */
  senderAuthenticated?: boolean;
  /**
   * Our own message as SES carried it: SES replaced the Message-ID we wrote with its own
   * (`<providerId@region.amazonses.com>`), the only one its recipients ever saw. Absent for mail of the SMTP
   * relay (our Message-ID went out as written), for received mail, and for ours not yet accepted by SES.
   */
  sentThroughSes?: { providerMessageId: string; region: string } | null;
}

/**
 * The Message-ID the answered message carries in its recipients' mailboxes: what a reply must name in
 * In-Reply-To and References for their clients to thread it. For our own mail sent through SES that is SES's
 * id, never the one we generated (SES dropped it); otherwise the Message-ID as stored.
 */
export function answeredMessageId(answered: Pick<AnsweredMessage, 'messageIdHeader'> & Partial<Pick<AnsweredMessage, 'direction' | 'sentThroughSes'>>): string | null {
  const ses = answered.direction === 'out' ? answered.sentThroughSes : null;
  return ses ? sesMessageIdHeader(ses.providerMessageId, ses.region) : answered.messageIdHeader;
}

/**
 * References grow by one id per answer; a long thread would grow the header without bound. RFC 5322 allows
 * trimming: keep the root (the first id, which clients thread on when the middle is lost) and the newest ones.
 */
export const MAX_REFERENCES = 20;

const RE = /^\s*re\s*:/i;

/**
 * "Re: <subject>", once: a subject already starting with Re: (any case) is kept as it is. An inbound subject is
 * the sender's text: line breaks in it become spaces, so it can never start a header of its own.
 */
export function replySubject(subject: string | null | undefined): string {
  const given = (subject ?? '').replace(/[\r\n]+/g, ' ').trim();
  if (RE.test(given)) return given;
  return given ? `Re: ${given}` : 'Re:';
}

/** In-Reply-To and References of an answer to `answered` (bare ids). No Message-ID: nothing to thread on. */
export function replyReferences(
  answered: Pick<AnsweredMessage, 'messageIdHeader' | 'references'> & Partial<Pick<AnsweredMessage, 'direction' | 'sentThroughSes'>>,
): { inReplyTo: string | null; references: string[] } {
  const id = answeredMessageId(answered);
  if (!id) return { inReplyTo: null, references: [...new Set(answered.references)].slice(-MAX_REFERENCES) };
  const chain = [...new Set([...answered.references.filter((reference) => reference !== id && reference !== answered.messageIdHeader), id])];
  const references = chain.length <= MAX_REFERENCES ? chain : [chain[0], ...chain.slice(-(MAX_REFERENCES - 1))];
  return { inReplyTo: id, references };
}

/** The MIME header values: each id in angle brackets, References space-separated. */
export function referenceHeaders(inReplyTo: string | null | undefined, references: readonly string[] | undefined): Record<string, string> {
  const headers: Record<string, string> = {};
  // An id with a bracket, space or line break would break out of its header: such ids are never written.
  const safe = (id: string) => /^[^\s<>]+@[^\s<>]+$/.test(id);
  if (inReplyTo && safe(inReplyTo)) headers['In-Reply-To'] = `<${inReplyTo}>`;
  const kept = (references ?? []).filter(safe);
  if (kept.length) headers.References = kept.map((id) => `<${id}>`).join(' ');
  return headers;
}

const lower = (address: string) => address.trim().toLowerCase();

/** Formatted mailbox strings minus the inbox itself and repeats (by address, any case). */
function without(list: readonly string[], exclude: ReadonlySet<string>, parse: (value: string) => Mailbox | null): string[] {
  const seen = new Set(exclude);
  const kept: string[] = [];
  for (const value of list) {
    const mailbox = parse(value);
    if (!mailbox || seen.has(lower(mailbox.address))) continue;
    seen.add(lower(mailbox.address));
    kept.push(formatMailbox(mailbox));
  }
  return kept;
}

/**
 * Who an answer goes to. Reply: the sender of an inbound message, or the recipients of our own message
 * (answering ourselves means writing to them again). Reply-all adds the answered message's other To and Cc
 * recipients, never the inbox itself.
 */
export function replyRecipients(
  answered: AnsweredMessage,
  inboxAddress: string,
  replyAll: boolean,
  parse: (value: string) => Mailbox | null,
): { to: string[]; cc: string[] } {
  const self = new Set([lower(inboxAddress)]);
  const sender = answered.fromAddress ? [formatMailbox({ name: answered.fromName, address: answered.fromAddress })] : [];
  const primary = answered.direction === 'in' ? sender : answered.to;
  // The To and Cc of a message whose From failed authentication are whatever a spoofer wrote: reply-all to it
  // answers its From alone, so an agent's answer cannot be steered to addresses of the spoofer's choosing.
  const all = replyAll && !(answered.direction === 'in' && answered.senderAuthenticated === false);
  const to = without(all && answered.direction === 'in' ? [...primary, ...answered.to] : primary, self, parse);
  const taken = new Set([...self, ...to.map((value) => lower(parse(value)?.address ?? value))]);
  const cc = all ? without(answered.cc, taken, parse) : [];
  return { to, cc };
}

function escapeHtml(value: string): string {
  return value.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;').replace(/"/g, '&quot;');
}

/** "On <date>, <sender> wrote:", the attribution line clients put above a quote. */
function attribution(answered: AnsweredMessage): string {
  const who = answered.fromAddress ? formatMailbox({ name: answered.fromName, address: answered.fromAddress }) : 'someone';
  return `On ${answered.createdAt.toUTCString()}, ${who} wrote:`;
}

/** The answer with the answered message quoted below it (text with "> ", html in a cite blockquote). */
export function quoted(answer: { text?: string; html?: string }, answered: AnsweredMessage): { text?: string; html?: string } {
  const line = attribution(answered);
  const previousText = answered.text ?? '';
  const text = answer.text !== undefined
    ? `${answer.text}\n\n${line}\n${previousText.split(/\r?\n/).map((row) => `> ${row}`).join('\n')}`
    : undefined;
  const previousHtml = answered.html ?? `<pre>${escapeHtml(previousText)}</pre>`;
  const html = answer.html !== undefined
    ? `${answer.html}\n<div>${escapeHtml(line)}</div>\n<blockquote type="cite" style="margin:0 0 0 .8ex;border-left:1px solid #ccc;padding-left:1ex">${previousHtml}</blockquote>`
    : undefined;
  return { text, html };
}
