import { QueryTypes, type Sequelize, type Transaction } from 'sequelize';
import type { InboundAuthResults, SenderMark } from '../../core/inbox/auth-results';

/**
 * The messages of an inbox, both directions: a thread's messages, the row a reply answers (the API);
 * the accepted row the inbound-mail workflow processes and the processed row with its counters (the workflow's
 * writes take the transaction of the whole processing, so a retried activity finds the row processed or does
 * all of it again). Drafts are inbox-drafts.ts, sending inbox-outbound.ts, threads inbox-threads.ts.
 */

export type InboxMessageStatus = 'received' | 'processed' | 'draft' | 'queued' | 'sent' | 'delivered' | 'bounced' | 'failed';

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

/** A thread's messages, oldest first, drafts included (their status says so). */
export async function listThreadMessages(db: Sequelize, workspaceId: string, threadId: string, transaction?: Transaction): Promise<InboxMessageRecord[]> {
  const rows = await db.query<MessageRow>(
    `SELECT ${MESSAGE_COLUMNS} FROM inbox_messages WHERE workspace_id = $1 AND thread_id = $2 ORDER BY created_at, id`,
    { bind: [workspaceId, threadId], type: QueryTypes.SELECT, transaction },
  );
  return rows.map(toMessage);
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
 * Ours carries how SES sent it, if SES did (the provider's id and the sending domain's region), since SES gave
 * it the Message-ID its recipients hold.
 */
export async function findAnsweredMessage(
  db: Sequelize,
  workspaceId: string,
  threadId: string,
): Promise<(InboxMessageRecord & { sentThroughSes: { providerMessageId: string; region: string } | null }) | null> {
  const rows = await db.query<MessageRow & { ses_provider_message_id: string | null; ses_region: string | null }>(
    `SELECT ${MESSAGE_COLUMNS.split(',').map((column) => `im.${column.trim()}`).join(', ')},
            CASE WHEN m.provider = 'ses' THEN m.provider_message_id END AS ses_provider_message_id, d.region AS ses_region
     FROM inbox_messages im
     LEFT JOIN messages m ON im.direction = 'out' AND m.workspace_id = im.workspace_id AND m.id = im.message_id
     LEFT JOIN domains d ON d.workspace_id = im.workspace_id AND d.name = lower(split_part(im.from_address, '@', 2))
     WHERE im.workspace_id = $1 AND im.thread_id = $2 AND im.status <> 'draft'
     ORDER BY (im.direction = 'in') DESC, im.created_at DESC, im.id DESC LIMIT 1`,
    { bind: [workspaceId, threadId], type: QueryTypes.SELECT },
  );
  const row = rows[0];
  if (!row) return null;
  const ses = row.ses_provider_message_id && row.ses_region ? { providerMessageId: row.ses_provider_message_id, region: row.ses_region } : null;
  return { ...toMessage(row), sentThroughSes: ses };
}

export interface InboundToProcess {
  id: string;
  workspaceId: string;
  inboxId: string;
  status: string;
  threadId: string | null;
  contactId: string | null;
  rawBlobKey: string | null;
  rawSize: number | null;
  /** The Message-ID the listener read (bare), or null when the mail had none. */
  messageIdHeader: string | null;
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
  message_id_header: string | null;
  auth: InboundAuthResults | null;
  created_at: Date;
  inbox_address: string;
}

/** The inbound row with its inbox's address; `lock` holds it until the transaction ends (one processing at a time). */
export async function findInboundMessage(db: Sequelize, workspaceId: string, id: string, transaction?: Transaction): Promise<InboundToProcess | null> {
  const rows = await db.query<InboundRow>(
    `SELECT m.id, m.workspace_id, m.inbox_id, m.status, m.thread_id, m.contact_id, m.raw_blob_key, m.raw_size, m.message_id_header, m.auth, m.created_at,
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
    messageIdHeader: row.message_id_header,
    auth: row.auth,
    createdAt: row.created_at,
    inboxAddress: row.inbox_address,
  };
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
