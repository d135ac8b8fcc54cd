import { randomUUID } from 'node:crypto';
import { QueryTypes, type Sequelize } from 'sequelize';

/** Reading an inbox: its threads by folder, a thread's messages, drafts. Sending is inbox-outbound.ts. */

export type ThreadFolder = 'inbox' | 'sent' | 'drafts' | 'archived';
export type InboxMessageStatus = 'received' | 'processed' | 'draft' | 'queued' | 'sent' | 'delivered' | 'bounced' | 'failed';

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

/** An attachment as an inbox row lists it: ours are attachment refs, inbound ones carry their blob key. */
export interface InboxAttachment {
  id?: string;
  filename?: string | null;
  contentType?: string;
  size?: number;
  contentId?: string | null;
  blobKey?: string;
}

export interface InboxMessageRecord {
  id: string;
  inboxId: string;
  threadId: string | null;
  direction: 'in' | 'out';
  status: InboxMessageStatus;
  messageIdHeader: string | null;
  inReplyTo: string | null;
  references: string[];
  fromAddress: string | null;
  fromName: string | null;
  to: string[];
  cc: string[];
  bcc: string[];
  subject: string | null;
  html: string | null;
  text: string | null;
  replyText: string | null;
  attachments: InboxAttachment[];
  auth: Record<string, unknown> | null;
  malformed: boolean;
  /** The messages row that carried an out row (null for inbound rows and drafts). */
  messageId: string | null;
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

interface MessageRow {
  id: string;
  inbox_id: string;
  thread_id: string | null;
  direction: 'in' | 'out';
  status: InboxMessageStatus;
  message_id_header: string | null;
  in_reply_to: string | null;
  references: string[];
  from_address: string | null;
  from_name: string | null;
  to_addresses: string[];
  cc_addresses: string[];
  bcc_addresses: string[];
  subject: string | null;
  html: string | null;
  text: string | null;
  reply_text: string | null;
  attachments: InboxAttachment[];
  auth: Record<string, unknown> | null;
  malformed: boolean;
  message_id: string | null;
  created_at: Date;
}

const MESSAGE_COLUMNS = `id, inbox_id, thread_id, direction, status, message_id_header, in_reply_to, "references", from_address, from_name,
  to_addresses, cc_addresses, bcc_addresses, subject, html, text, reply_text, attachments, auth, malformed, message_id, created_at`;

const toMessage = (row: MessageRow): InboxMessageRecord => ({
  id: row.id,
  inboxId: row.inbox_id,
  threadId: row.thread_id,
  direction: row.direction,
  status: row.status,
  messageIdHeader: row.message_id_header,
  inReplyTo: row.in_reply_to,
  references: row.references,
  fromAddress: row.from_address,
  fromName: row.from_name,
  to: row.to_addresses,
  cc: row.cc_addresses,
  bcc: row.bcc_addresses,
  subject: row.subject,
  html: row.html,
  text: row.text,
  replyText: row.reply_text,
  attachments: row.attachments,
  auth: row.auth,
  malformed: row.malformed,
  messageId: row.message_id,
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

export async function findThread(db: Sequelize, workspaceId: string, inboxId: string, threadId: string): Promise<ThreadRecord | null> {
  const rows = await db.query<ThreadRow>(`SELECT ${THREAD_COLUMNS} FROM threads WHERE workspace_id = $1 AND inbox_id = $2 AND id = $3`, {
    bind: [workspaceId, inboxId, threadId],
    type: QueryTypes.SELECT,
  });
  return rows[0] ? toThread(rows[0]) : null;
}

/** A thread's messages, oldest first, drafts included (their status says so). */
export async function listThreadMessages(db: Sequelize, workspaceId: string, threadId: string): Promise<InboxMessageRecord[]> {
  const rows = await db.query<MessageRow>(
    `SELECT ${MESSAGE_COLUMNS} FROM inbox_messages WHERE workspace_id = $1 AND thread_id = $2 ORDER BY created_at, id`,
    { bind: [workspaceId, threadId], type: QueryTypes.SELECT },
  );
  return rows.map(toMessage);
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

export async function findInboxMessage(db: Sequelize, workspaceId: string, inboxId: string, id: string): Promise<InboxMessageRecord | null> {
  const rows = await db.query<MessageRow>(`SELECT ${MESSAGE_COLUMNS} FROM inbox_messages WHERE workspace_id = $1 AND inbox_id = $2 AND id = $3`, {
    bind: [workspaceId, inboxId, id],
    type: QueryTypes.SELECT,
  });
  return rows[0] ? toMessage(rows[0]) : null;
}

/** The out row a messages row carried (a repeated idempotencyKey answers with it). */
export async function findOutboundByMessage(db: Sequelize, workspaceId: string, messageId: string): Promise<InboxMessageRecord | null> {
  const rows = await db.query<MessageRow>(`SELECT ${MESSAGE_COLUMNS} FROM inbox_messages WHERE workspace_id = $1 AND message_id = $2`, {
    bind: [workspaceId, messageId],
    type: QueryTypes.SELECT,
  });
  return rows[0] ? toMessage(rows[0]) : null;
}

/**
 * What a reply answers: the thread's latest inbound message (a parsed one, or one still being parsed that
 * already has its Message-ID), else its latest message of ours that went out. Drafts are never answered.
 */
export async function findAnsweredMessage(db: Sequelize, workspaceId: string, threadId: string): Promise<InboxMessageRecord | null> {
  const rows = await db.query<MessageRow>(
    `SELECT ${MESSAGE_COLUMNS} FROM inbox_messages
     WHERE workspace_id = $1 AND thread_id = $2 AND status <> 'draft'
     ORDER BY (direction = 'in') DESC, created_at DESC, id DESC LIMIT 1`,
    { bind: [workspaceId, threadId], type: QueryTypes.SELECT },
  );
  return rows[0] ? toMessage(rows[0]) : null;
}

export interface NewDraft {
  inboxId: string;
  /** The thread it answers, or null for a new conversation (a thread in folder `drafts` is made for it). */
  threadId: string | null;
  fromAddress: string;
  fromName: string | null;
  to: string[];
  cc: string[];
  bcc: string[];
  subject: string | null;
  html: string | null;
  text: string | null;
  attachments: InboxAttachment[];
  normalizedSubject: string;
  /** The correspondents' lower-case addresses (threads.participants), the inbox excluded. */
  participants: string[];
}

/** A draft row and, for a new conversation, its thread, in one statement. Returns the draft and thread ids. */
export async function insertDraft(db: Sequelize, workspaceId: string, draft: NewDraft): Promise<{ draftId: string; threadId: string }> {
  const draftId = randomUUID();
  const threadId = draft.threadId ?? randomUUID();
  await db.query(
    `WITH thread AS (
       INSERT INTO threads AS t (id, workspace_id, inbox_id, subject, normalized_subject, participants, folder, message_count)
       VALUES ($3, $1, $2, COALESCE($9, ''), $14, $15::text[], 'drafts', 1)
       ON CONFLICT (id) DO UPDATE SET message_count = t.message_count + 1, updated_at = now()
       WHERE t.workspace_id = $1 AND t.inbox_id = $2
       RETURNING id
     )
     INSERT INTO inbox_messages (id, workspace_id, inbox_id, thread_id, direction, status, from_address, from_name,
       to_addresses, cc_addresses, bcc_addresses, subject, html, text, attachments)
     SELECT $4, $1, $2, thread.id, 'out', 'draft', $5, $6, $7::text[], $8::text[], $13::text[], $9, $10, $11, $12::jsonb FROM thread`,
    {
      bind: [
        workspaceId, draft.inboxId, threadId, draftId, draft.fromAddress, draft.fromName, draft.to, draft.cc, draft.subject,
        draft.html, draft.text, JSON.stringify(draft.attachments), draft.bcc, draft.normalizedSubject, draft.participants,
      ],
    },
  );
  return { draftId, threadId };
}

/**
 * Deletes a draft. A new conversation's thread that holds nothing else goes with it; a reply draft's thread
 * counts one message less.
 */
export async function deleteDraft(db: Sequelize, workspaceId: string, inboxId: string, draftId: string): Promise<boolean> {
  const rows = await db.query<{ thread_id: string | null }>(
    `WITH gone AS (
       DELETE FROM inbox_messages WHERE workspace_id = $1 AND inbox_id = $2 AND id = $3 AND status = 'draft' RETURNING thread_id
     ),
     emptied AS (
       DELETE FROM threads t USING gone WHERE t.workspace_id = $1 AND t.id = gone.thread_id AND t.folder = 'drafts' AND t.message_count <= 1
       RETURNING t.id
     ),
     counted AS (
       UPDATE threads t SET message_count = greatest(t.message_count - 1, 0), updated_at = now()
       FROM gone WHERE t.workspace_id = $1 AND t.id = gone.thread_id AND NOT EXISTS (SELECT 1 FROM emptied)
     )
     SELECT thread_id FROM gone`,
    { bind: [workspaceId, inboxId, draftId], type: QueryTypes.SELECT },
  );
  return rows.length === 1;
}
