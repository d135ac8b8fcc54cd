import type { Logger } from 'pino';
import type { Sequelize, Transaction } from 'sequelize';
import { isDmarcFailure, type InboundAuthResults } from '../core/inbox/auth-results';
import { inboundContactEventKey, type InboundContactEventName, legacyInboundContactEventKey } from '../core/inbox/contact-events';
import { authenticateSender, type SenderAuthentication, senderMark } from '../core/inbox/sender-authentication';
import { chooseThread, normalizeMessageId, normalizeSubject, type ReferencedThread, sesProviderIdOf, SUBJECT_WINDOW_MS, threadingReferences, type ThreadChoice } from '../core/inbox/threading';
import { normaliseAddress } from '../core/identities';
import type { BlobStore } from '../db/blob-store';
import { acceptContactEvent, findEventByKey } from '../db/repositories/contact-events';
import { findIdentityOwners } from '../db/repositories/contact-identities';
import { countReceived, findInboundMessage, type InboundToProcess, markProcessed, type StoredAttachment } from '../db/repositories/inbox-messages';
import { addToThread, createThread, subjectCandidates, threadHasSentMessage, threadsOfReferences } from '../db/repositories/inbox-threads';
import { insertPlatformEventOnce } from '../db/repositories/platform-events';
import { type JourneyControl, matchStoredEvent } from '../services/journey-events';
import { type ParsedInbound, parseInboundMail } from './inbox-parse';

export interface InboundMailDeps {
  db: Sequelize;
  blobs: BlobStore;
  /** Journey event signals for the events a reply records (a port: activities/ports.ts). */
  journeys: JourneyControl;
  /** The largest raw message the listener accepts (INBOUND_MAX_MESSAGE_BYTES): nothing larger is read back. */
  maxMessageBytes: number;
  logger?: Logger;
}

export interface InboundMailInput {
  workspaceId: string;
  inboxMessageId: string;
}


export type ProcessOutcome =
  | {
    status: 'processed' | 'already_processed';
    threadId: string;
    /** The contact event stored with the message (a known contact sent it), which journeys are still to be told of. */
    contactEvent: InboundContactEventName | null;
  }
  /** The row is gone (its inbox was deleted): nothing left to do. */
  | { status: 'missing' };

/** The contact event a processed copy stored or found (one per mail: core/inbox/contact-events.ts), if any. */
export async function contactEventOf(db: Sequelize, row: InboundToProcess) {
  if (!row.contactId) return null;
  const key = inboundContactEventKey(row.contactId, { inboxMessageId: row.id, messageIdHeader: row.messageIdHeader, rawBlobKey: row.rawBlobKey });
  return (await findEventByKey(db, row.workspaceId, key)) ?? findEventByKey(db, row.workspaceId, legacyInboundContactEventKey(row.id));
}

/** How long the reply-text preview of the `email.received` payload is. */
const PREVIEW_CHARS = 280;

/** Where an inbound message's attachment lives in the blob store: fixed per message and position, so a retried activity overwrites its own upload. */
export function inboundAttachmentKey(workspaceId: string, inboxMessageId: string, index: number): string {
  return `inbound/${workspaceId}/${inboxMessageId}/attachments/${index}`;
}

const authSummary = (auth: InboundAuthResults | null) =>
  auth && {
    spf: auth.spf.result,
    dkim: auth.dkim.map((signature) => ({ result: signature.result, domain: signature.domain, aligned: signature.aligned })),
    dmarc: auth.dmarc.result,
    dmarcPolicy: auth.dmarc.policy,
  };

/** The `email.received` webhook payload (docs: webhooks). */
function receivedEventData(row: InboundToProcess, parsed: ParsedInbound, threadId: string, contactId: string | null, isReply: boolean, sender: SenderAuthentication) {
  return {
    inboxId: row.inboxId,
    threadId,
    messageId: row.id,
    messageIdHeader: parsed.messageId,
    from: parsed.fromAddress,
    fromName: parsed.fromName,
    to: parsed.to,
    cc: parsed.cc,
    subject: parsed.subject,
    replyTextPreview: parsed.replyText?.slice(0, PREVIEW_CHARS) ?? null,
    attachments: parsed.attachments.length,
    auth: authSummary(row.auth),
    spoofed: isDmarcFailure(row.auth),
    /** The From passed DMARC, or aligned SPF or DKIM: only then is it linked to a contact (docs/inboxes.md). */
    authenticated: sender.authenticated,
    malformed: parsed.defects.length > 0,
    contactId,
    isReply,
    receivedAt: row.createdAt.toISOString(),
  };
}

/** The raw message as the listener stored it, read no further than the listener would have accepted. */
export async function readRaw(deps: Pick<InboundMailDeps, 'blobs' | 'maxMessageBytes'>, row: InboundToProcess): Promise<Buffer | null> {
  if (!row.rawBlobKey) return null;
  return deps.blobs.get(row.rawBlobKey, Math.max(row.rawSize ?? 0, deps.maxMessageBytes));
}

/** Each attachment to the blob store at its fixed key, before the transaction: a retry overwrites its own uploads. */
export async function storeAttachments(blobs: BlobStore, row: InboundToProcess, parsed: ParsedInbound): Promise<StoredAttachment[]> {
  const stored: StoredAttachment[] = [];
  for (const [index, attachment] of parsed.attachments.entries()) {
    const blobKey = inboundAttachmentKey(row.workspaceId, row.id, index);
    await blobs.put(blobKey, attachment.content, attachment.contentType);
    stored.push({ index, filename: attachment.filename, contentType: attachment.contentType, size: attachment.content.length, contentId: attachment.contentId, inline: attachment.inline, blobKey });
  }
  return stored;
}

/**
 * Which thread the message joins (references first, then subject in a thread the sender is vouched in),
 * or null. Who may join how is chooseThread's rule; this gathers what it decides on.
 */
export async function threadOf(db: Sequelize, row: InboundToProcess, parsed: ParsedInbound, sender: SenderAuthentication, transaction: Transaction): Promise<ThreadChoice> {
  const references = threadingReferences(parsed.inReplyTo, parsed.references);
  const providerIds = new Map(references.flatMap((reference) => {
    const providerId = sesProviderIdOf(reference);
    return providerId ? [[providerId, normalizeMessageId(reference)] as const] : [];
  }));
  const found = await threadsOfReferences(db, row.inboxId, { messageIds: references.map(normalizeMessageId), providerIds: [...providerIds.keys()] }, transaction);
  const threadByReference = new Map<string, ReferencedThread>();
  for (const match of found) {
    const reference = match.messageIdHeader ? normalizeMessageId(match.messageIdHeader) : providerIds.get(match.providerMessageId ?? '');
    if (reference) threadByReference.set(reference, { threadId: match.threadId, participants: match.participants });
  }
  const normalizedSubject = normalizeSubject(parsed.subject);
  const now = row.createdAt;
  // Only an authenticated From may join by subject: for anyone else there is nothing to look up.
  const candidates = sender.authenticated && parsed.fromAddress
    ? await subjectCandidates(db, row.inboxId, { normalizedSubject, since: new Date(now.getTime() - SUBJECT_WINDOW_MS), sender: parsed.fromAddress }, transaction)
    : [];
  return chooseThread({
    references,
    threadByReference,
    normalizedSubject,
    sender: { address: parsed.fromAddress, authenticated: sender.authenticated },
    candidates,
    now,
    subjectWindowMs: SUBJECT_WINDOW_MS,
  });
}

/** The contact whose email identity the address is, if any. */
export async function contactOf(db: Sequelize, workspaceId: string, address: string | null, transaction: Transaction): Promise<string | null> {
  const normalised = address ? normaliseAddress('email', address) : null;
  if (!normalised?.ok) return null;
  const [owner] = await findIdentityOwners(db, workspaceId, [{ channel: 'email', address: normalised.address }], transaction);
  return owner?.contactId ?? null;
}

/**
 * The contact's event, stored in the processing transaction: it exists exactly when the message was processed.
 * Null when another copy of the same mail (to another inbox of the workspace) already stored it: that copy's
 * workflow tells the journeys, this one has nothing to add.
 */
export async function storeContactEvent(
  db: Sequelize, row: InboundToProcess, parsed: ParsedInbound, threadId: string, contactId: string, isReply: boolean, transaction: Transaction,
): Promise<InboundContactEventName | null> {
  const name: InboundContactEventName = isReply ? 'email.replied' : 'email.received';
  const stored = await acceptContactEvent(db, row.workspaceId, {
    contactId,
    name,
    // Flat values only, so an automation's `match` can test them.
    properties: { inboxId: row.inboxId, threadId, inboxMessageId: row.id, inbox: row.inboxAddress, from: parsed.fromAddress ?? '', subject: parsed.subject ?? '' },
    occurredAt: row.createdAt,
    idempotencyKey: inboundContactEventKey(contactId, { inboxMessageId: row.id, messageIdHeader: row.messageIdHeader, rawBlobKey: row.rawBlobKey }),
  }, transaction);
  return stored.duplicate ? null : name;
}

/** The outcome of a message an earlier attempt processed, with the contact event it stored (not another copy's). */
export async function alreadyProcessed(db: Sequelize, row: InboundToProcess): Promise<ProcessOutcome> {
  const event = await contactEventOf(db, row);
  const ours = event && event.properties.inboxMessageId === row.id;
  return { status: 'already_processed', threadId: row.threadId ?? '', contactEvent: ours ? (event.name as InboundContactEventName) : null };
}

/**
 * Parses an accepted message and files it: attachments to the blob store, then in one transaction the
 * thread (joined or new), the processed row with its contact, the inbox's daily count and the
 * `email.received` platform event. The row is locked and must still be `received`, so a redelivered
 * activity finds it processed and counts nothing twice. Malformed mail is stored as far as it reads,
 * flagged: nothing the sender wrote makes this throw. A block rule added after the listener accepted the
 * mail does not drop it: it was accepted under the rules of its time and is the workspace's mail.
 */
export async function processInboundMail(deps: InboundMailDeps, input: InboundMailInput): Promise<ProcessOutcome> {
  const { db } = deps;
  const before = await findInboundMessage(db, input.workspaceId, input.inboxMessageId);
  if (!before) return { status: 'missing' };
  if (before.status !== 'received') return alreadyProcessed(db, before);
  const raw = await readRaw(deps, before);
  const parsed = raw ? await parseInboundMail(raw) : { ...(await parseInboundMail(Buffer.alloc(0))), defects: ['raw_missing' as const] };
  const attachments = await storeAttachments(deps.blobs, before, parsed);

  return db.transaction(async (transaction): Promise<ProcessOutcome> => {
    const row = await findInboundMessage(db, input.workspaceId, input.inboxMessageId, transaction);
    if (!row) return { status: 'missing' };
    if (row.status !== 'received') return alreadyProcessed(db, row);
    const correspondents = [...new Set([parsed.fromAddress, ...parsed.to, ...parsed.cc].filter((address): address is string => Boolean(address)))]
      .filter((address) => address !== row.inboxAddress);
    const arrival = {
      workspaceId: row.workspaceId,
      inboxId: row.inboxId,
      subject: parsed.subject ?? '',
      normalizedSubject: normalizeSubject(parsed.subject),
      participants: correspondents,
      at: row.createdAt,
    };
    const sender = authenticateSender(row.auth, parsed.fromAddress);
    const joined = await threadOf(db, row, parsed, sender, transaction);
    const threadId = joined?.threadId ?? (await createThread(db, arrival, transaction));
    if (joined) await addToThread(db, joined.threadId, arrival, transaction);
    const isReply = joined ? await threadHasSentMessage(db, row.workspaceId, joined.threadId, transaction) : false;
    // Only an authenticated From is the contact's word: anyone can write a contact's address in From, and a
    // spoofed "reply" must not fire email.replied, reach a goal or end a journey. It is kept, marked.
    const contactId = sender.authenticated ? await contactOf(db, row.workspaceId, parsed.fromAddress, transaction) : null;
    await markProcessed(db, row.workspaceId, row.id, {
      threadId,
      sender: senderMark(sender, joined?.by ?? 'new'),
      contactId,
      fromAddress: parsed.fromAddress,
      fromName: parsed.fromName,
      to: parsed.to,
      cc: parsed.cc,
      subject: parsed.subject,
      html: parsed.html,
      text: parsed.text,
      replyText: parsed.replyText,
      inReplyTo: parsed.inReplyTo,
      references: parsed.references,
      attachments,
      malformed: parsed.defects.length > 0,
      defects: parsed.defects,
    }, transaction);
    await countReceived(db, row.workspaceId, row.inboxId, row.createdAt, transaction);
    await insertPlatformEventOnce(db, row.workspaceId, { type: 'email.received', data: receivedEventData(row, parsed, threadId, contactId, isReply, sender) }, row.id, transaction);
    const contactEvent = contactId ? await storeContactEvent(db, row, parsed, threadId, contactId, isReply, transaction) : null;
    return { status: 'processed', threadId, contactEvent };
  });
}

/** The inbound-mail workflow's activities; processInboundMail is the named function above. */
export function createInboundMailActivities(deps: InboundMailDeps) {
  const { db } = deps;

  return {
    processInboundMail: (input: InboundMailInput) => processInboundMail(deps, input),

    /**
     * Hands the contact's stored `email.replied` or `email.received` event to journeys as POST /events does
     * (triggers, goals, waits). When Temporal cannot take it now, the journey sweeper matches it later.
     */
    async matchInboundContactEvent(input: InboundMailInput): Promise<{ matched: boolean }> {
      const row = await findInboundMessage(db, input.workspaceId, input.inboxMessageId);
      const event = row ? await contactEventOf(db, row) : null;
      if (!event) return { matched: false };
      const outcome = await matchStoredEvent({ db, journeys: deps.journeys, temporalTimeoutMs: 30_000, logger: deps.logger }, event);
      return { matched: outcome.processed };
    },
  };
}

export type InboundMailActivities = ReturnType<typeof createInboundMailActivities>;
