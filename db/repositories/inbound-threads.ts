import { randomUUID } from 'node:crypto';
import { QueryTypes, type Sequelize, type Transaction } from 'sequelize';
import type { InboundAuthResults, SenderMark } from '../../core/inbox/auth-results';
import type { SubjectCandidate } from '../../core/inbox/threading';

/**
 * The inbound-mail workflow's reads and writes: the accepted row it processes, the earlier messages and
 * threads it may join, and the processed row with its thread and counters. The writes take the transaction
 * of the whole processing, so a retried activity either finds the row processed or does all of it again.
 */

export interface InboundToProcess {
  id: string;
  workspaceId: string;
  inboxId: string;
  status: string;
  threadId: string | null;
  contactId: string | null;
  rawBlobKey: string | null;
  rawSize: number | null;
  auth: InboundAuthResults | null;
  createdAt: Date;
  /** The inbox's own address (`local_part@domain`, lower-case): never one of a thread's correspondents. */
  inboxAddress: string;
}

interface InboundRow {
  id: string;
  workspace_id: string;
  inbox_id: string;
  status: string;
  thread_id: string | null;
  contact_id: string | null;
  raw_blob_key: string | null;
  raw_size: number | null;
  auth: InboundAuthResults | null;
  created_at: Date;
  inbox_address: string;
}

/** The inbound row with its inbox's address; `lock` holds it until the transaction ends (one processing at a time). */
export async function findInboundMessage(db: Sequelize, workspaceId: string, id: string, transaction?: Transaction): Promise<InboundToProcess | null> {
  const rows = await db.query<InboundRow>(
    `SELECT m.id, m.workspace_id, m.inbox_id, m.status, m.thread_id, m.contact_id, m.raw_blob_key, m.raw_size, m.auth, m.created_at,
            lower(i.local_part || '@' || d.name) AS inbox_address
       FROM inbox_messages m
       JOIN inboxes i ON i.workspace_id = m.workspace_id AND i.id = m.inbox_id
       JOIN domains d ON d.id = i.domain_id
      WHERE m.workspace_id = $1 AND m.id = $2 AND m.direction = 'in'
      ${transaction ? 'FOR UPDATE OF m' : ''}`,
    { bind: [workspaceId, id], type: QueryTypes.SELECT, transaction },
  );
  const row = rows[0];
  if (!row) return null;
  return {
    id: row.id,
    workspaceId: row.workspace_id,
    inboxId: row.inbox_id,
    status: row.status,
    threadId: row.thread_id,
    contactId: row.contact_id,
    rawBlobKey: row.raw_blob_key,
    rawSize: row.raw_size,
    auth: row.auth,
    createdAt: row.created_at,
    inboxAddress: row.inbox_address,
  };
}

/**
 * The threads of the inbox's earlier messages that these ids name: by our Message-ID header (inbound ids are
 * stored normalized; ours are `<messages.id>@<sending domain>`), or by the provider id SES rewrote ours to.
 * Each answer says which id matched, so the caller keeps the nearest ancestor, and who is in that thread.
 */
export async function threadsOfReferences(
  db: Sequelize,
  inboxId: string,
  ids: { messageIds: readonly string[]; providerIds: readonly string[] },
  transaction: Transaction,
): Promise<Array<{ messageIdHeader: string | null; providerMessageId: string | null; threadId: string; participants: string[] }>> {
  if (!ids.messageIds.length && !ids.providerIds.length) return [];
  return db.query(
    // Both arms use their index (inbox_messages_header_idx, inbox_messages_provider_idx).
    `SELECT r."messageIdHeader", r."providerMessageId", r."threadId", t.participants
       FROM (SELECT message_id_header AS "messageIdHeader", NULL AS "providerMessageId", thread_id AS "threadId"
               FROM inbox_messages WHERE inbox_id = $1 AND message_id_header = ANY ($2::text[]) AND thread_id IS NOT NULL
             UNION ALL
             SELECT NULL, provider_message_id, thread_id
               FROM inbox_messages WHERE inbox_id = $1 AND provider_message_id = ANY ($3::text[]) AND thread_id IS NOT NULL) r
       JOIN threads t ON t.id = r."threadId"`,
    { bind: [inboxId, ids.messageIds, ids.providerIds], type: QueryTypes.SELECT, transaction },
  );
}

/**
 * Recent threads of the inbox with this normalized subject (threads_subject_idx), for subject threading, each
 * saying whether the sender is vouched in it (inbox_messages_thread_idx): we wrote to it there (our To, Cc or
 * Bcc, which may be `Name <address>`), or it wrote there with an authenticated From (`auth.sender`, set by
 * markProcessed). To and Cc of inbound mail are left out: an unauthenticated stranger could put anyone there.
 * EXISTS stops at the first vouching message, so a thread the sender is in costs a few rows, whatever its size.
 */
export async function subjectCandidates(
  db: Sequelize,
  inboxId: string,
  query: { normalizedSubject: string; since: Date; sender: string },
  transaction: Transaction,
): Promise<SubjectCandidate[]> {
  if (!query.normalizedSubject) return [];
  return db.query<SubjectCandidate>(
    `SELECT t.id AS "threadId", t.normalized_subject AS "normalizedSubject", t.last_message_at AS "lastMessageAt",
            EXISTS (SELECT 1 FROM inbox_messages m
                     WHERE m.workspace_id = t.workspace_id AND m.thread_id = t.id
                       AND ((m.direction = 'in' AND m.from_address = $4 AND m.auth -> 'sender' ->> 'authenticated' = 'true')
                         OR (m.direction = 'out' AND m.status <> 'draft'
                             AND EXISTS (SELECT 1 FROM unnest(m.to_addresses || m.cc_addresses || m.bcc_addresses) AS address
                                          -- A plain address, or one in angle brackets after a name; no regex: four times cheaper over a long thread.
                                          WHERE lower(address) = $4 OR right(lower(address), length($4) + 2) = '<' || $4 || '>')))
            ) AS "senderVouched"
       FROM threads t WHERE t.inbox_id = $1 AND t.normalized_subject = $2 AND t.last_message_at >= $3
      ORDER BY t.last_message_at DESC LIMIT 20`,
    { bind: [inboxId, query.normalizedSubject, query.since, query.sender.toLowerCase()], type: QueryTypes.SELECT, transaction },
  );
}

export interface ThreadArrival {
  workspaceId: string;
  inboxId: string;
  subject: string;
  normalizedSubject: string;
  /** The message's correspondents, lower-case, the inbox excluded. */
  participants: readonly string[];
  at: Date;
}

export async function createThread(db: Sequelize, arrival: ThreadArrival, transaction: Transaction): Promise<string> {
  const id = randomUUID();
  await db.query(
    `INSERT INTO threads (id, workspace_id, inbox_id, subject, normalized_subject, participants, folder, message_count, unread_count, last_message_at)
     VALUES ($1, $2, $3, $4, $5, $6::text[], 'inbox', 1, 1, $7)`,
    { bind: [id, arrival.workspaceId, arrival.inboxId, arrival.subject, arrival.normalizedSubject, arrival.participants, arrival.at], transaction },
  );
  return id;
}

/**
 * A new inbound message in an existing thread: counted, its correspondents added, and a thread filed in
 * `sent` or `archived` comes back to `inbox`, since someone wrote to it.
 */
export async function addToThread(db: Sequelize, threadId: string, arrival: ThreadArrival, transaction: Transaction): Promise<void> {
  await db.query(
    `UPDATE threads SET
        message_count = message_count + 1,
        unread_count = unread_count + 1,
        participants = ARRAY(SELECT DISTINCT p FROM unnest(participants || $3::text[]) AS p ORDER BY p),
        last_message_at = greatest(last_message_at, $4),
        folder = CASE WHEN folder IN ('sent', 'archived') THEN 'inbox' ELSE folder END,
        updated_at = now()
      WHERE workspace_id = $1 AND id = $2`,
    { bind: [arrival.workspaceId, threadId, arrival.participants, arrival.at], transaction },
  );
}

/** Whether the thread holds a message we sent: an inbound message joining it is a reply to us. */
export async function threadHasSentMessage(db: Sequelize, workspaceId: string, threadId: string, transaction: Transaction): Promise<boolean> {
  const rows = await db.query<{ found: boolean }>(
    `SELECT EXISTS (SELECT 1 FROM inbox_messages WHERE workspace_id = $1 AND thread_id = $2 AND direction = 'out' AND status <> 'draft') AS found`,
    { bind: [workspaceId, threadId], type: QueryTypes.SELECT, transaction },
  );
  return rows[0]?.found ?? false;
}

export interface StoredAttachment {
  index: number;
  filename: string | null;
  contentType: string;
  size: number;
  contentId: string | null;
  inline: boolean;
  /** Where the bytes are in the blob store. */
  blobKey: string;
}

export interface ProcessedFields {
  threadId: string;
  /** Merged into the stored verdicts as `auth.sender`: the API's message view shows it, subject threading reads it. */
  sender: SenderMark;
  contactId: string | null;
  fromAddress: string | null;
  fromName: string | null;
  to: readonly string[];
  cc: readonly string[];
  subject: string | null;
  html: string | null;
  text: string | null;
  replyText: string | null;
  inReplyTo: string | null;
  references: readonly string[];
  attachments: readonly StoredAttachment[];
  malformed: boolean;
  defects: readonly string[];
}

/** The row as parsed and threaded, `processed`; only a `received` row moves, so a repeat changes nothing. */
export async function markProcessed(db: Sequelize, workspaceId: string, id: string, fields: ProcessedFields, transaction: Transaction): Promise<void> {
  await db.query(
    `UPDATE inbox_messages SET status = 'processed', thread_id = $3, contact_id = $4, from_address = $5, from_name = $6,
        to_addresses = $7::text[], cc_addresses = $8::text[], subject = $9, html = $10, text = $11, reply_text = $12,
        in_reply_to = $13, "references" = $14::text[], attachments = $15::jsonb, malformed = $16, parse_defects = $17::text[],
        auth = coalesce(auth, '{}'::jsonb) || jsonb_build_object('sender', $18::jsonb), updated_at = now()
      WHERE workspace_id = $1 AND id = $2 AND status = 'received'`,
    {
      bind: [
        workspaceId, id, fields.threadId, fields.contactId, fields.fromAddress, fields.fromName, fields.to, fields.cc, fields.subject,
        fields.html, fields.text, fields.replyText, fields.inReplyTo, fields.references, JSON.stringify(fields.attachments), fields.malformed, fields.defects,
        JSON.stringify(fields.sender),
      ],
      transaction,
    },
  );
}

/** One more received message on the inbox's day (UTC), in the transaction that processed it. */
export async function countReceived(db: Sequelize, workspaceId: string, inboxId: string, at: Date, transaction: Transaction): Promise<void> {
  await db.query(
    `INSERT INTO inbox_daily_counters (workspace_id, inbox_id, day, received) VALUES ($1, $2, ($3::timestamptz AT TIME ZONE 'UTC')::date, 1)
     ON CONFLICT (inbox_id, day) DO UPDATE SET received = inbox_daily_counters.received + 1`,
    { bind: [workspaceId, inboxId, at], transaction },
  );
}

/** A contact's received mail for its journey, newest first (inbox_messages_contact_idx). */
export interface ReceivedMailEntry {
  at: Date;
  inboxMessageId: string;
  inboxId: string;
  threadId: string | null;
  subject: string | null;
  inboxAddress: string;
  inboxDisplayName: string | null;
}

export async function receivedMailOfContact(db: Sequelize, workspaceId: string, contactId: string, page: { limit: number; before?: Date }): Promise<ReceivedMailEntry[]> {
  return db.query<ReceivedMailEntry>(
    `SELECT m.created_at AS at, m.id AS "inboxMessageId", m.inbox_id AS "inboxId", m.thread_id AS "threadId", m.subject,
            lower(i.local_part || '@' || d.name) AS "inboxAddress", i.display_name AS "inboxDisplayName"
       FROM inbox_messages m
       JOIN inboxes i ON i.workspace_id = m.workspace_id AND i.id = m.inbox_id
       JOIN domains d ON d.id = i.domain_id
      WHERE m.workspace_id = $1 AND m.contact_id = $2 AND ($3::timestamptz IS NULL OR m.created_at < $3)
      ORDER BY m.created_at DESC LIMIT $4`,
    { bind: [workspaceId, contactId, page.before ?? null, page.limit], type: QueryTypes.SELECT },
  );
}
