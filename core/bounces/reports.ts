import type { ProviderEvent } from '../delivery';

/**
 * Bounce and complaint mail, as it reaches a VERP return path, read into what it says about the recipient
 * the return path names: RFC 3464 delivery status notifications (multipart/report; report-type=
 * delivery-status), RFC 5965 ARF complaints (report-type=feedback-report), and the plain-text bounces that
 * Postfix, Exim, qmail and others still send without a machine-readable part. MIME is decoded by the caller
 * (mailparser); this reads the decoded parts.
 */

/** A decoded report mail: its subject, its readable text, and its report parts by content type. */
export interface ReportMail {
  subject: string;
  /** The human-readable text (text/plain, or the text derived from the HTML). */
  text: string;
  /** The `report-type` of a multipart/report, lower case; null otherwise. */
  reportType: string | null;
  /** Parts as text: message/delivery-status, message/feedback-report, text/rfc822-headers, message/rfc822. */
  parts: ReadonlyArray<{ contentType: string; content: string }>;
}

/** One recipient's block of a delivery status notification (RFC 3464 §2.3), as far as it is given. */
export interface RecipientStatus {
  recipient: string | null;
  action: string | null;
  status: string | null;
  diagnosticCode: string | null;
}

export type ParsedReport =
  | { kind: 'delivery-status'; recipients: RecipientStatus[] }
  | { kind: 'feedback'; feedbackType: string; recipients: string[] }
  | { kind: 'none' };

/**
 * Why a bounce happened, by its status code (RFC 3463): the mailbox or domain does not exist (x.1.x), the
 * mailbox is disabled (5.2.1) or full (x.2.2), the receiver's policy refused the mail (x.7.x: spam, DMARC,
 * reputation: about the mail or us, not the address), a temporary condition (4.x.x), or another failure.
 */
export type BounceCategory = 'mailbox' | 'disabled' | 'mailbox_full' | 'policy' | 'transient' | 'other';

/** What a report means for the recipient of the return path, in the event vocabulary of SES notifications. */
export type ReportVerdict =
  | {
      event: 'bounce';
      /** `hard` only when the address itself is bad (suppressed); policy, full and temporary refusals are `soft`. */
      bounceType: 'hard' | 'soft';
      category: BounceCategory;
      status: string | null;
      diagnosticCode: string | null;
      /** The recipient the report itself names (it may differ: a forward); kept, never acted upon. */
      reportedRecipient: string | null;
    }
  | { event: 'delivery_delayed'; status: string | null; diagnosticCode: string | null; reportedRecipient: string | null }
  | { event: 'complaint'; feedbackType: string; reportedRecipient: string | null };

const ENHANCED = /\b([245])\.(\d{1,3})\.(\d{1,3})\b/;
const BASIC = /\b([45])\d\d\b/;
const ADDRESS = /[^\s<>"'(),;:]+@[^\s<>"'(),;:]+\.[a-z0-9-]+/i;
/** Wording of bounces that say the address does not exist, for those that give no enhanced code. */
const NO_SUCH_ADDRESS = /user unknown|unknown user|no such (user|mailbox|recipient|person)|does not exist|doesn't exist|address not found|recipient not found|mailbox (unavailable|not found)|invalid (mailbox|recipient)|not a valid mailbox|account (is )?(disabled|inactive)|recipient address rejected/i;
/** A mail that says it is a bounce or a delay, so a plain-text one is told from an auto-reply. */
const BOUNCE_WORDING = /undeliver|returned mail|returning message|delivery status notification|mail delivery (failed|system|subsystem)|failure notice|delivery (has )?failed|could not be delivered|couldn't be delivered|wasn't delivered|was not delivered|not able to deliver|wasn't able to deliver|permanent error|delayed mail|delivery delayed|will be retried|still being retried/i;
const DELAY_WORDING = /\bdelay(ed)?\b|will be retried|still (being )?(retried|trying)|warning only|not yet been delivered|temporary failure/i;

/** Header-style fields (RFC 822 syntax): blocks separated by blank lines, continuation lines unfolded. */
export function fieldBlocks(text: string): Array<Map<string, string>> {
  const blocks: Array<Map<string, string>> = [];
  let current = new Map<string, string>();
  let last: string | null = null;
  for (const line of text.replace(/\r\n?/g, '\n').split('\n')) {
    if (line.trim() === '') {
      if (current.size) blocks.push(current);
      current = new Map();
      last = null;
    } else if (/^[ \t]/.test(line) && last) {
      current.set(last, `${current.get(last) ?? ''} ${line.trim()}`);
    } else {
      const colon = line.indexOf(':');
      if (colon <= 0) continue;
      last = line.slice(0, colon).trim().toLowerCase();
      if (!current.has(last)) current.set(last, line.slice(colon + 1).trim());
    }
  }
  if (current.size) blocks.push(current);
  return blocks;
}

/** `rfc822; ann@example.com` → `ann@example.com`; `<ann@x>` → `ann@x`. */
function addressOf(value: string | undefined): string | null {
  if (!value) return null;
  const typed = value.includes(';') ? value.slice(value.indexOf(';') + 1) : value;
  return ADDRESS.exec(typed)?.[0].replace(/^<|>$/g, '').toLowerCase() ?? null;
}

/** `smtp; 550 5.1.1 ...` → `550 5.1.1 ...`, multi-line replies joined (`550-5.1.1 a 550-5.1.1 b`). */
function diagnosticOf(value: string | undefined): string | null {
  if (!value) return null;
  const text = /^[a-z-]+;/i.test(value) ? value.slice(value.indexOf(';') + 1) : value;
  return text.replace(/\s+/g, ' ').trim() || null;
}

function statusOf(status: string | undefined, diagnostic: string | null): string | null {
  const given = status ? ENHANCED.exec(status)?.[0] : undefined;
  if (given) return given;
  if (!diagnostic) return null;
  const enhanced = ENHANCED.exec(diagnostic)?.[0];
  if (enhanced) return enhanced;
  const basic = BASIC.exec(diagnostic)?.[1];
  return basic ? `${basic}.0.0` : null;
}

function deliveryStatus(content: string): RecipientStatus[] {
  // The first block is per-message (Reporting-MTA ...); each later block names one recipient.
  return fieldBlocks(content)
    .filter((block) => block.has('final-recipient') || block.has('original-recipient') || block.has('action'))
    .map((block) => {
      const diagnosticCode = diagnosticOf(block.get('diagnostic-code'));
      return {
        recipient: addressOf(block.get('final-recipient')) ?? addressOf(block.get('original-recipient')),
        action: block.get('action')?.toLowerCase().split(/\s/)[0] ?? null,
        status: statusOf(block.get('status'), diagnosticCode),
        diagnosticCode,
      };
    });
}

/**
 * A bounce written only for people (Postfix's and qmail's `<address>:` paragraphs, Exim's indented
 * failed addresses, Gmail's and Exchange's prose): the first SMTP reply in it and the address before it.
 */
function plainTextStatus(mail: ReportMail): RecipientStatus[] {
  const text = mail.text.replace(/\r\n?/g, '\n');
  if (!BOUNCE_WORDING.test(`${mail.subject}\n${text}`)) return [];
  const reply = /(?:^|\s|')((?:[45]\d\d)[ -](?:[245]\.\d{1,3}\.\d{1,3})?[^\n]*(?:\n[ \t]+[^\n]+)*)/m.exec(text);
  const diagnosticCode = reply ? reply[1].replace(/\s+/g, ' ').replace(/'$/, '').trim() : null;
  const before = reply ? text.slice(0, reply.index) : text;
  const addresses = before.match(new RegExp(ADDRESS.source, 'gi')) ?? [];
  const delayed = DELAY_WORDING.test(`${mail.subject}\n${text}`) && !/permanent error|given up|giving up/i.test(text);
  return [{
    recipient: addresses.length ? addresses[addresses.length - 1].toLowerCase() : null,
    action: delayed ? 'delayed' : 'failed',
    status: statusOf(undefined, diagnosticCode) ?? (delayed ? '4.0.0' : null),
    diagnosticCode,
  }];
}

export function parseReport(mail: ReportMail): ParsedReport {
  const part = (type: string) => mail.parts.find((each) => each.contentType.toLowerCase() === type)?.content;
  const feedback = part('message/feedback-report');
  if (feedback !== undefined || mail.reportType === 'feedback-report') {
    const fields = fieldBlocks(feedback ?? '')[0] ?? new Map<string, string>();
    const recipients = [fields.get('original-rcpt-to'), fields.get('removal-recipient')].flatMap((value) => addressOf(value) ?? []);
    return { kind: 'feedback', feedbackType: fields.get('feedback-type')?.toLowerCase() ?? 'abuse', recipients };
  }
  const status = part('message/delivery-status');
  const recipients = status !== undefined ? deliveryStatus(status) : [];
  if (recipients.length) return { kind: 'delivery-status', recipients };
  const plain = plainTextStatus(mail);
  return plain.length ? { kind: 'delivery-status', recipients: plain } : { kind: 'none' };
}

/** Hard or soft, and why, from the enhanced status code (or, without one, the basic code and wording). */
export function classifyStatus(status: string | null, diagnosticCode: string | null): { bounceType: 'hard' | 'soft'; category: BounceCategory } {
  const match = status ? ENHANCED.exec(status) : null;
  const [klass, subject, detail] = match ? [match[1], Number(match[2]), Number(match[3])] : ['5', 0, 0];
  if (klass === '4') return { bounceType: 'soft', category: detail === 2 && subject === 2 ? 'mailbox_full' : 'transient' };
  if (subject === 7) return { bounceType: 'soft', category: 'policy' };
  if (subject === 2 && detail === 2) return { bounceType: 'soft', category: 'mailbox_full' };
  if (subject === 2 && detail === 1) return { bounceType: 'hard', category: 'disabled' };
  // 5.1.7 and 5.1.8 are about our sender address, not the recipient's: never suppress the recipient for them.
  if (subject === 1 && detail !== 7 && detail !== 8) return { bounceType: 'hard', category: 'mailbox' };
  if (subject === 1) return { bounceType: 'soft', category: 'policy' };
  // A generic 5.0.0 (or a bare 550) is hard only when it says the address does not exist.
  if (subject === 0 && diagnosticCode && NO_SUCH_ADDRESS.test(diagnosticCode)) return { bounceType: 'hard', category: 'mailbox' };
  return { bounceType: 'soft', category: 'other' };
}

/**
 * What the report means for `recipient`, the address the return path was made for: that recipient's
 * block when the report names it, otherwise the report's first failure or delay (a forward or an alias
 * reports the final address, not the one we sent to). Null for mail that reports nothing (an auto-reply,
 * a success notice).
 */
export function verdictFor(report: ParsedReport, recipient: string): ReportVerdict | null {
  if (report.kind === 'none') return null;
  const wanted = recipient.toLowerCase();
  if (report.kind === 'feedback') {
    return { event: 'complaint', feedbackType: report.feedbackType, reportedRecipient: report.recipients[0] ?? null };
  }
  const relevant = report.recipients.filter((each) => each.action === null || each.action === 'failed' || each.action === 'delayed');
  const chosen = relevant.find((each) => each.recipient === wanted) ?? relevant[0];
  if (!chosen) return null;
  const delayed = chosen.action === 'delayed' || (chosen.action === null && chosen.status?.startsWith('4'));
  if (delayed) return { event: 'delivery_delayed', status: chosen.status, diagnosticCode: chosen.diagnosticCode, reportedRecipient: chosen.recipient };
  const { bounceType, category } = classifyStatus(chosen.status, chosen.diagnosticCode);
  return { event: 'bounce', bounceType, category, status: chosen.status, diagnosticCode: chosen.diagnosticCode, reportedRecipient: chosen.recipient };
}

/** The status of an SMTP reply: its enhanced code, or `x.0.0` from its basic code. */
export function statusOfReply(reply: string): string | null {
  return statusOf(undefined, diagnosticOf(reply));
}

/**
 * A refusal while we waited (RCPT TO or DATA answered 5xx or 4xx) read like a DSN's failed recipient: the
 * same classification, so `550 5.1.1 User unknown` at RCPT and the same text in a later DSN are one thing.
 */
export function refusalVerdict(reply: string, transient: boolean): ReportVerdict {
  const status = statusOfReply(reply);
  const classified = classifyStatus(transient && !status?.startsWith('4') ? '4.0.0' : status, reply);
  return { event: 'bounce', ...classified, status, diagnosticCode: reply.replace(/\s+/g, ' ').trim(), reportedRecipient: null };
}

/**
 * The event a verdict records on the message, for the one address the return path (or the refusal)
 * names: a bounce's detail is its diagnostic code, and its status code, category and what the report
 * itself named go in the event's data.
 */
export function eventOfVerdict(verdict: ReportVerdict, address: string, providerMessageId: string, source: 'dsn' | 'smtp' | 'arf', at: Date | null): ProviderEvent {
  const reported = verdict.reportedRecipient && verdict.reportedRecipient !== address.toLowerCase() ? { reportedRecipient: verdict.reportedRecipient } : {};
  switch (verdict.event) {
    case 'bounce':
      return {
        type: 'bounce',
        providerMessageId,
        bounceType: verdict.bounceType,
        detail: verdict.diagnosticCode ?? verdict.status ?? verdict.category,
        recipients: [address],
        at,
        data: { source, status: verdict.status, category: verdict.category, diagnosticCode: verdict.diagnosticCode, ...reported },
      };
    case 'delivery_delayed':
      return { type: 'delivery_delayed', providerMessageId, at, data: { source, status: verdict.status, diagnosticCode: verdict.diagnosticCode, recipients: [address], ...reported } };
    case 'complaint':
      return { type: 'complaint', providerMessageId, recipients: [address], at, data: { source, feedbackType: verdict.feedbackType, ...reported } };
  }
}
