import { randomUUID } from 'node:crypto';
import type { Sequelize } from 'sequelize';
import { domainOf, formatMailbox, type Mailbox, parseMailboxes } from '../../core/addresses';
import type { AttachmentSource } from '../../core/attachments';
import { AppError } from '../../core/errors';
import { normalizeSubject } from '../../core/inbox/threading';
import { periodKey, PLANS, usagePeriodAt } from '../../core/plans';
import { parseRecipients } from '../../core/recipients';
import { requestHash } from '../../core/request-hash';
import { inboxOutFollowUp } from '../../db/repositories/inbox-outbound';
import { findOutboundByMessage } from '../../db/repositories/inbox-messages';
import type { InboxRecord } from '../../db/repositories/inboxes';
import { findAcceptedAndSuppressed } from '../../db/repositories/message-acceptance';
import type { DroppedRecipient } from '../../db/repositories/messages';
import { currentTraceparent } from '../../infra/trace-context';
import { draftSend, messageOf, recipientAddresses, type SendChecks, type SendEmailInput } from './email-draft';
import type { Quota, Sender } from './outcome';
import { counted } from './metrics';
import { type AcceptanceWriter, writeOne } from './write';

export type InboxSendOutcome =
  | { status: 'queued'; id: string; threadId: string; messageId: string; droppedRecipients: DroppedRecipient[] }
  | { status: 'duplicate'; id: string; threadId: string; messageId: string };

/** One message to accept from an inbox: what POST /emails would take, plus where it goes in the inbox. */
export interface Outgoing {
  to: string[] | string;
  cc?: string[] | string;
  bcc?: string[] | string;
  subject: string;
  html?: string;
  text?: string;
  attachments?: AttachmentSource[];
  idempotencyKey: string;
  threadId: string;
  /** The draft whose row becomes this message, if any. */
  draftId?: string;
  inReplyTo: string | null;
  references: string[];
}

const lower = (address: string) => address.toLowerCase();

/** One mailbox of a stored address, or null (an address list never stands for one correspondent). */
export function mailboxOf(value: string): Mailbox | null {
  const parsed = parseMailboxes(value);
  return parsed.ok && parsed.mailboxes.length === 1 ? parsed.mailboxes[0] : null;
}

/** The answer to a repeat: the inbox message the key's first send became. */
export async function inboxDuplicateOf(db: Sequelize, workspaceId: string, messageId: string): Promise<InboxSendOutcome> {
  const row = await findOutboundByMessage(db, workspaceId, messageId);
  if (!row || !row.threadId) throw new AppError('conflict', 'This idempotencyKey was used by a send that is not of an inbox');
  return { status: 'duplicate', id: row.id, threadId: row.threadId, messageId };
}

/**
 * The acceptance of POST /emails (idempotency, recipients, verified sender domain, attachments, suppression,
 * quota), from the inbox's address and name, with the inbox row, thread and counter in the same statement.
 * Inbox mail is one-to-one correspondence: no open pixel, links as written, no UTM tags. Throws the
 * refusal's AppError (the inbox routes answer one send at a time).
 */
export async function acceptInboxMail(
  deps: AcceptanceWriter & { checks: SendChecks },
  principal: Sender,
  inbox: InboxRecord,
  out: Outgoing,
): Promise<InboxSendOutcome> {
  return counted('email', 'inbox', () => writeInboxMail(deps, principal, inbox, out));
}

/** acceptInboxMail's checks and write, uncounted. */
async function writeInboxMail(
  deps: AcceptanceWriter & { checks: SendChecks },
  principal: Sender,
  inbox: InboxRecord,
  out: Outgoing,
): Promise<InboxSendOutcome> {
  const { db, checks } = deps;
  const { workspaceId } = principal;
  const from = formatMailbox({ name: inbox.displayName, address: inbox.address });
  const input: SendEmailInput = {
    to: out.to, cc: out.cc, bcc: out.bcc, from, subject: out.subject, html: out.html, text: out.text, attachments: out.attachments,
    idempotencyKey: out.idempotencyKey, disableTracking: true, disableUtm: true,
  };
  const parsed = parseRecipients(input);
  const hash = requestHash({ inboxId: inbox.id, threadId: out.threadId, ...input });
  const { accepted, suppressed } = await findAcceptedAndSuppressed(db, workspaceId, [out.idempotencyKey], recipientAddresses(parsed));
  const existing = accepted.get(out.idempotencyKey);
  if (existing) return inboxDuplicateOf(db, workspaceId, existing.id);

  const draft = await draftSend(checks, workspaceId, input, hash, parsed);
  const discard = () => draft.attachments?.discard().catch(() => undefined);
  // Inbox mail counts apart from the API's transactional mail in GET /usage's byKind.
  const quota: Quota = { plan: PLANS[principal.plan], period: usagePeriodAt(new Date()), countAs: 'inbox' };
  let made: ReturnType<typeof messageOf>;
  try {
    made = messageOf(draft, randomUUID(), suppressed, periodKey(quota.period));
  } catch (error) {
    await discard();
    throw error;
  }
  const message = {
    ...made.message,
    content: { ...made.message.content, inReplyTo: out.inReplyTo ?? undefined, references: out.references },
    // The request's trace context, which the send's workflow joins (docs/observability.md, Traces).
    traceparent: currentTraceparent(),
  };
  const self = lower(inbox.address);
  const participants = [...new Set([...message.to, ...message.cc].map((value) => lower(mailboxOf(value)?.address ?? value)))].filter((a) => a !== self);
  const id = out.draftId ?? randomUUID();
  const followUp = inboxOutFollowUp({
    id,
    inboxId: inbox.id,
    threadId: out.threadId,
    messageId: message.id,
    // The Message-ID providers/mime.ts writes, without its brackets.
    messageIdHeader: `${message.id}@${domainOf(draft.from.address)}`,
    inReplyTo: out.inReplyTo,
    references: out.references,
    fromAddress: draft.from.address,
    fromName: draft.from.name,
    to: message.to,
    cc: message.cc,
    bcc: message.bcc,
    subject: out.subject,
    html: out.html ?? null,
    text: out.text ?? null,
    attachments: draft.attachments?.refs ?? [],
    normalizedSubject: normalizeSubject(out.subject),
    participants,
    newMessage: out.draftId === undefined,
  });
  const outcome = await writeOne(deps, workspaceId, quota, { message, hash, dropped: made.dropped, discard }, followUp);
  switch (outcome.status) {
    case 'accepted':
      return { status: 'queued', id, threadId: out.threadId, messageId: message.id, droppedRecipients: made.dropped };
    case 'duplicate':
      return inboxDuplicateOf(db, workspaceId, outcome.id);
    case 'failed':
      throw outcome.error;
  }
}
