import { randomUUID } from 'node:crypto';
import { QueryTypes, type Sequelize, type Transaction } from 'sequelize';
import type { SubjectCandidate } from '../../core/inbox/threading';

/**
 * An inbox's threads: reading them by folder and filing them (the API), and the inbound-mail workflow's
 * threading of an arrival (the threads its references or subject name, a new thread or one more message in one).
 * The workflow's writes take the transaction of the whole processing. The messages in them are inbox-messages.ts.
 */

export type ThreadFolder = 'inbox' | 'sent' | 'drafts' | 'archived';

export interface ThreadRecord {
  id: string;
  inboxId: string;
  subject: string;
  folder: ThreadFolder;
  participants: string[];
  messageCount: number;
  unreadCount: number;
  lastMessageAt: Date;
  createdAt: Date;
}

interface ThreadRow {
  id: string;
  inbox_id: string;
  subject: string;
  folder: ThreadFolder;
  participants: string[];
  message_count: number;
  unread_count: number;
  last_message_at: Date;
  created_at: Date;
}

const THREAD_COLUMNS = 'id, inbox_id, subject, folder, participants, message_count, unread_count, last_message_at, created_at';

const toThread = (row: ThreadRow): ThreadRecord => ({
  id: row.id,
  inboxId: row.inbox_id,
  subject: row.subject,
  folder: row.folder,
  participants: row.participants,
  messageCount: row.message_count,
  unreadCount: row.unread_count,
  lastMessageAt: row.last_message_at,
  createdAt: row.created_at,
});
/** Where a page ends: the last thread's position in the folder's order (newest activity first). */
export interface ThreadCursor {
  lastMessageAt: Date;
  id: string;
}

/** One page of a folder, newest activity first, by keyset on threads_folder_idx (stable while mail arrives). */
export async function listThreads(
  db: Sequelize,
  workspaceId: string,
  inboxId: string,
  folder: ThreadFolder,
  page: { limit: number; after: ThreadCursor | null },
): Promise<ThreadRecord[]> {
  const rows = await db.query<ThreadRow>(
    `SELECT ${THREAD_COLUMNS} FROM threads
     WHERE workspace_id = $1 AND inbox_id = $2 AND folder = $3
       AND ($4::timestamptz IS NULL OR (last_message_at, id) < ($4::timestamptz, $5::uuid))
     ORDER BY last_message_at DESC, id DESC LIMIT $6`,
    { bind: [workspaceId, inboxId, folder, page.after?.lastMessageAt ?? null, page.after?.id ?? null, page.limit], type: QueryTypes.SELECT },
  );
  return rows.map(toThread);
}

export async function findThread(db: Sequelize, workspaceId: string, inboxId: string, threadId: string, transaction?: Transaction): Promise<ThreadRecord | null> {
  const rows = await db.query<ThreadRow>(`SELECT ${THREAD_COLUMNS} FROM threads WHERE workspace_id = $1 AND inbox_id = $2 AND id = $3`, {
    bind: [workspaceId, inboxId, threadId],
    type: QueryTypes.SELECT,
    transaction,
  });
  return rows[0] ? toThread(rows[0]) : null;
}

/** Moves a thread to another folder (archive, unarchive); reading a thread's messages also marks them read. */
export async function setThreadFolder(db: Sequelize, workspaceId: string, inboxId: string, threadId: string, folder: ThreadFolder): Promise<ThreadRecord | null> {
  const rows = await db.query<ThreadRow>(
    `UPDATE threads SET folder = $4, updated_at = now() WHERE workspace_id = $1 AND inbox_id = $2 AND id = $3 RETURNING ${THREAD_COLUMNS}`,
    { bind: [workspaceId, inboxId, threadId, folder], type: QueryTypes.SELECT },
  );
  return rows[0] ? toThread(rows[0]) : null;
}

/** Marks a thread's inbound messages read, as opening it in a client does. */
export async function markThreadRead(db: Sequelize, workspaceId: string, threadId: string): Promise<void> {
  await db.query(
    `WITH read AS (
       UPDATE inbox_messages SET read_at = now() WHERE workspace_id = $1 AND thread_id = $2 AND direction = 'in' AND read_at IS NULL RETURNING id
     )
     UPDATE threads SET unread_count = 0 WHERE workspace_id = $1 AND id = $2 AND unread_count <> 0 AND EXISTS (SELECT 1 FROM read)`,
    { bind: [workspaceId, threadId] },
  );
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
