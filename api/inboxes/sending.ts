import { randomUUID } from 'node:crypto';
import { formatMailbox } from '../../core/addresses';
import type { AttachmentSource } from '../../core/attachments';
import { AppError } from '../../core/errors';
import { sanitizeReceivedHtml } from '../../core/inbox/received-html';
import { derivedSendKeys, type SendIdentity } from '../../core/inbox/send-keys';
import { normalizeSubject } from '../../core/inbox/threading';
import { type AnsweredMessage, quoted, replyRecipients, replyReferences, replySubject } from '../../core/inbox/replies';
import { parseRecipients } from '../../core/recipients';
import { deleteDraft, type DraftChanges, insertDraft, updateDraft } from '../../db/repositories/inbox-drafts';
import { findAcceptedKey } from '../../db/repositories/message-acceptance';
import {
  findAnsweredMessage,
  findInboxMessage,
  findOutboundByMessage,
  type InboxAttachment,
  type InboxMessageRecord,
} from '../../db/repositories/inbox-messages';
import type { InboxRecord } from '../../db/repositories/inboxes';
import type { SendChecks } from '../../services/acceptance/email-draft';
import type { AcceptanceWriter } from '../../services/acceptance/write';
import { acceptInboxMail, inboxDuplicateOf, type InboxSendOutcome, mailboxOf, type Outgoing } from '../../services/acceptance/inbox-acceptance';
import type { Sender } from '../../services/acceptance/outcome';
import type { InboxService } from './service';
import type { CreateDraftInput, ReplyInput, SendInboxInput, UpdateDraftInput } from './schemas';

const fieldError = (field: string, message: string) => AppError.validation({ formErrors: [], fieldErrors: { [field]: [message] } });

const lower = (address: string) => address.toLowerCase();

/** An attachment already stored (a draft's) sent again by its id, as shown in the draft. */
const storedSources = (attachments: readonly InboxAttachment[]): AttachmentSource[] =>
  attachments.flatMap((attachment) =>
    attachment.id ? [{ id: attachment.id, ...(attachment.filename && { filename: attachment.filename }), ...(attachment.contentId && { contentId: attachment.contentId }) }] : [],
  );

export interface InboxSendingDeps extends AcceptanceWriter {
  checks: SendChecks;
  inboxes: InboxService;
}

export async function activeInbox({ inboxes }: InboxSendingDeps, workspaceId: string, inboxId: string): Promise<InboxRecord> {
  const inbox = await inboxes.get(workspaceId, inboxId);
  if (inbox.status !== 'active') throw new AppError('conflict', 'The inbox is disabled: enable it (PATCH status active) to send');
  return inbox;
}

/** Inbox mail goes through the one acceptance (services/acceptance/inbox-acceptance.ts). */
const accept = ({ db, checks, wake }: InboxSendingDeps, principal: Sender, inbox: InboxRecord, out: Outgoing) => acceptInboxMail({ db, checks, wake }, principal, inbox, out);

/** In-Reply-To, References, subject and recipients of an answer in this thread. */
export async function answering({ db }: InboxSendingDeps, workspaceId: string, inbox: InboxRecord, threadId: string, replyAll: boolean) {
  const answered = await findAnsweredMessage(db, workspaceId, threadId);
  if (!answered) throw new AppError('conflict', 'The thread has no message to answer yet (only a draft)');
  const mark = (answered.auth?.sender ?? null) as { authenticated?: boolean } | null;
  // A quote of received mail carries its html sanitized, as the thread shows it: never the sender's scripts or pixels.
  const html = answered.direction === 'in' && answered.html !== null ? sanitizeReceivedHtml(answered.html) : answered.html;
  const message: AnsweredMessage = { ...answered, html, senderAuthenticated: mark?.authenticated };
  return { answered: message, ...replyReferences(message), subject: replySubject(message.subject), ...replyRecipients(message, inbox.address, replyAll, mailboxOf) };
}

/**
 * The key of a send that came without one (core/inbox/send-keys.ts): this window's, unless the same send was
 * accepted under the previous window's key less than a window ago, which then answers it as a repeat.
 */
export async function derivedIdempotencyKey({ db }: InboxSendingDeps, workspaceId: string, identity: SendIdentity): Promise<string> {
  const keys = derivedSendKeys(identity, new Date());
  const earlier = await findAcceptedKey(db, workspaceId, keys.previous);
  if (!earlier) return keys.current;
  const row = await findOutboundByMessage(db, workspaceId, earlier.id);
  return row && row.createdAt > keys.freshSince ? keys.previous : keys.current;
}

/** A new conversation: a thread in folder `sent` with this first message. */
export async function sendInboxMessage(deps: InboxSendingDeps, principal: Sender, inboxId: string, body: SendInboxInput): Promise<InboxSendOutcome> {
  const inbox = await activeInbox(deps, principal.workspaceId, inboxId);
  return accept(deps, principal, inbox, {
    ...body,
    idempotencyKey: body.idempotencyKey ?? (await derivedIdempotencyKey(deps, principal.workspaceId, { inboxId: inbox.id, scope: 'send', body })),
    threadId: randomUUID(),
    inReplyTo: null,
    references: [],
  });
}

/** An answer to the thread's last inbound message (else its last message): reply or reply-all, quoted or not. */
export async function replyInThread(deps: InboxSendingDeps, principal: Sender, inboxId: string, threadId: string, body: ReplyInput): Promise<InboxSendOutcome> {
  const inbox = await activeInbox(deps, principal.workspaceId, inboxId);
  await deps.inboxes.thread(principal.workspaceId, inboxId, threadId);
  const answer = await answering(deps, principal.workspaceId, inbox, threadId, body.replyAll);
  const to = body.to ?? answer.to;
  if (to.length === 0) throw fieldError('to', 'The answered message leaves no one to answer: give to');
  const content = body.quote ? quoted({ text: body.text, html: body.html }, answer.answered) : { text: body.text, html: body.html };
  return accept(deps, principal, inbox, {
    to,
    cc: body.cc ?? answer.cc,
    bcc: body.bcc,
    subject: answer.subject,
    ...content,
    attachments: body.attachments,
    idempotencyKey: body.idempotencyKey ?? (await derivedIdempotencyKey(deps, principal.workspaceId, { inboxId: inbox.id, scope: { threadId }, body })),
    threadId,
    inReplyTo: answer.inReplyTo,
    references: answer.references,
  });
}

/** A draft of a new conversation (its own thread in `drafts`) or of a reply (in its thread). Attachments are stored now. */
export async function createInboxDraft({ db, checks, inboxes }: InboxSendingDeps, principal: Sender, inboxId: string, body: CreateDraftInput): Promise<{ draftId: string; threadId: string }> {
  const { workspaceId } = principal;
  const inbox = await inboxes.get(workspaceId, inboxId);
  const thread = body.threadId ? await inboxes.thread(workspaceId, inboxId, body.threadId) : null;
  const parsed = parseRecipients({ to: body.to ?? [], cc: body.cc, bcc: body.bcc });
  if (!parsed.ok && 'tooMany' in parsed) throw new AppError('too_many_recipients', `to + cc + bcc may hold at most 50 recipients; got ${parsed.tooMany}`);
  if (!parsed.ok) throw fieldError(parsed.field, parsed.error);
  const stored = body.attachments?.length ? await checks.prepareAttachments(workspaceId, body.attachments) : null;
  const { to, cc, bcc } = parsed.recipients;
  const subject = body.subject ?? (thread ? replySubject(thread.subject) : null);
  try {
    return await insertDraft(db, workspaceId, {
      inboxId: inbox.id,
      threadId: thread?.id ?? null,
      fromAddress: inbox.address,
      fromName: inbox.displayName,
      to: to.map(formatMailbox),
      cc: cc.map(formatMailbox),
      bcc: bcc.map(formatMailbox),
      subject,
      html: body.html ?? null,
      text: body.text ?? null,
      attachments: stored?.refs ?? [],
      normalizedSubject: normalizeSubject(subject),
      participants: [...new Set([...to, ...cc].map((mailbox) => lower(mailbox.address)))].filter((address) => address !== lower(inbox.address)),
    });
  } catch (error) {
    await stored?.discard().catch(() => undefined);
    throw error;
  }
}

export async function getInboxDraft({ db, inboxes }: InboxSendingDeps, workspaceId: string, inboxId: string, draftId: string): Promise<InboxMessageRecord> {
  await inboxes.get(workspaceId, inboxId);
  const draft = await findInboxMessage(db, workspaceId, inboxId, draftId);
  if (!draft || draft.status !== 'draft') throw AppError.notFound('Draft');
  return draft;
}

export async function deleteInboxDraft(deps: InboxSendingDeps, workspaceId: string, inboxId: string, draftId: string): Promise<InboxMessageRecord> {
  const draft = await getInboxDraft(deps, workspaceId, inboxId, draftId);
  if (!(await deleteDraft(deps.db, workspaceId, inboxId, draftId))) throw AppError.notFound('Draft');
  return draft;
}

const sentDraft = () => new AppError('conflict', 'This draft was sent: a sent message no longer changes');

/**
 * Changes an unsent draft: only the fields given, the others stay (null clears subject, html or text;
 * attachments replace the draft's files). A draft already sent is a message now: 409 conflict.
 */
export async function updateInboxDraft(deps: InboxSendingDeps, principal: Sender, inboxId: string, draftId: string, body: UpdateDraftInput): Promise<InboxMessageRecord> {
  const { db, checks } = deps;
  const { workspaceId } = principal;
  const inbox = await deps.inboxes.get(workspaceId, inboxId);
  const draft = await findInboxMessage(db, workspaceId, inboxId, draftId);
  if (!draft || draft.direction !== 'out') throw AppError.notFound('Draft');
  if (draft.status !== 'draft') throw sentDraft();
  const changes: DraftChanges = {};
  if (body.to !== undefined || body.cc !== undefined || body.bcc !== undefined) {
    const parsed = parseRecipients({ to: body.to ?? draft.to, cc: body.cc ?? draft.cc, bcc: body.bcc ?? draft.bcc });
    if (!parsed.ok && 'tooMany' in parsed) throw new AppError('too_many_recipients', `to + cc + bcc may hold at most 50 recipients; got ${parsed.tooMany}`);
    if (!parsed.ok) throw fieldError(parsed.field, parsed.error);
    const { to, cc, bcc } = parsed.recipients;
    Object.assign(changes, { to: to.map(formatMailbox), cc: cc.map(formatMailbox), bcc: bcc.map(formatMailbox) });
    changes.participants = [...new Set([...to, ...cc].map((mailbox) => lower(mailbox.address)))].filter((address) => address !== lower(inbox.address));
  }
  if (body.subject !== undefined) {
    changes.subject = body.subject;
    changes.normalizedSubject = normalizeSubject(body.subject);
  }
  if (body.html !== undefined) changes.html = body.html;
  if (body.text !== undefined) changes.text = body.text;
  const stored = body.attachments?.length ? await checks.prepareAttachments(workspaceId, body.attachments) : null;
  if (body.attachments !== undefined) changes.attachments = stored?.refs ?? [];
  if (!(await updateDraft(db, workspaceId, inboxId, draftId, changes))) {
    await stored?.discard().catch(() => undefined);
    // Sent (or deleted) between the read and the write.
    const now = await findInboxMessage(db, workspaceId, inboxId, draftId);
    throw now ? sentDraft() : AppError.notFound('Draft');
  }
  return (await findInboxMessage(db, workspaceId, inboxId, draftId)) as InboxMessageRecord;
}

/**
 * Sends a draft through the same path as send and reply: a reply draft answers the thread's latest message
 * as it is now. A draft without recipients, subject or body is refused field by field (422). The draft's
 * id is its idempotency key, so a draft is sent once however often this is called.
 */
export async function sendInboxDraft(deps: InboxSendingDeps, principal: Sender, inboxId: string, draftId: string): Promise<InboxSendOutcome> {
  const { db, inboxes } = deps;
  const { workspaceId } = principal;
  const inbox = await activeInbox(deps, workspaceId, inboxId);
  const idempotencyKey = `inbox-draft:${draftId}`;
  const draft = await findInboxMessage(db, workspaceId, inboxId, draftId);
  if (draft && draft.status !== 'draft' && draft.messageId) return inboxDuplicateOf(db, workspaceId, draft.messageId);
  if (!draft || !draft.threadId) throw AppError.notFound('Draft');
  const thread = await inboxes.thread(workspaceId, inboxId, draft.threadId);
  const isReply = thread.folder !== 'drafts';
  const answer = isReply ? await answering(deps, workspaceId, inbox, thread.id, false) : null;
  const to = draft.to.length ? draft.to : answer?.to ?? [];
  const subject = draft.subject ?? answer?.subject ?? null;
  const missing: Record<string, string[]> = {};
  if (to.length === 0) missing.to = ['Required to send the draft'];
  if (!subject) missing.subject = ['Required to send the draft'];
  if (draft.html === null && draft.text === null) missing.html = ['Give html or text before sending the draft'];
  if (Object.keys(missing).length) throw AppError.validation({ formErrors: ['The draft is incomplete'], fieldErrors: missing });
  return accept(deps, principal, inbox, {
    to,
    cc: draft.cc,
    bcc: draft.bcc,
    subject: subject as string,
    html: draft.html ?? undefined,
    text: draft.text ?? undefined,
    attachments: draft.attachments.length ? storedSources(draft.attachments) : undefined,
    idempotencyKey,
    threadId: thread.id,
    draftId,
    inReplyTo: answer?.inReplyTo ?? null,
    references: answer?.references ?? [],
  });
}

export function createInboxSending(deps: InboxSendingDeps) {
  return {
    send: (principal: Sender, inboxId: string, body: SendInboxInput) => sendInboxMessage(deps, principal, inboxId, body),
    reply: (principal: Sender, inboxId: string, threadId: string, body: ReplyInput) => replyInThread(deps, principal, inboxId, threadId, body),
    createDraft: (principal: Sender, inboxId: string, body: CreateDraftInput) => createInboxDraft(deps, principal, inboxId, body),
    getDraft: (workspaceId: string, inboxId: string, draftId: string) => getInboxDraft(deps, workspaceId, inboxId, draftId),
    deleteDraft: (workspaceId: string, inboxId: string, draftId: string) => deleteInboxDraft(deps, workspaceId, inboxId, draftId),
    updateDraft: (principal: Sender, inboxId: string, draftId: string, body: UpdateDraftInput) => updateInboxDraft(deps, principal, inboxId, draftId, body),
    sendDraft: (principal: Sender, inboxId: string, draftId: string) => sendInboxDraft(deps, principal, inboxId, draftId),
  };
}

export type InboxSending = ReturnType<typeof createInboxSending>;
