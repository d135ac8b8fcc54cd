import { QueryTypes, type Sequelize, type Transaction } from 'sequelize';

export type AttachmentStatus = 'pending' | 'ready' | 'deleted';
/** `upload`: created with POST /attachments. `send`: stored from a send's content or url item. */
export type AttachmentOrigin = 'upload' | 'send';

export interface AttachmentRecord {
  id: string;
  workspaceId: string;
  filename: string;
  contentType: string;
  size: number;
  status: AttachmentStatus;
  origin: AttachmentOrigin;
  sourceUrl: string | null;
  storageKey: string;
  createdAt: Date;
  readyAt: Date | null;
  deletedAt: Date | null;
}

interface AttachmentRow {
  id: string;
  workspace_id: string;
  filename: string;
  content_type: string;
  size: string;
  status: AttachmentStatus;
  origin: AttachmentOrigin;
  source_url: string | null;
  storage_key: string;
  created_at: Date;
  ready_at: Date | null;
  deleted_at: Date | null;
}

const toRecord = (row: AttachmentRow): AttachmentRecord => ({
  id: row.id,
  workspaceId: row.workspace_id,
  filename: row.filename,
  contentType: row.content_type,
  // bigint arrives as a string; attachments are at most 10 MB, far inside a JS number.
  size: Number(row.size),
  status: row.status,
  origin: row.origin,
  sourceUrl: row.source_url,
  storageKey: row.storage_key,
  createdAt: row.created_at,
  readyAt: row.ready_at,
  deletedAt: row.deleted_at,
});

export interface NewAttachment {
  id: string;
  filename: string;
  contentType: string;
  size: number;
  status: 'pending' | 'ready';
  origin: AttachmentOrigin;
  sourceUrl: string | null;
  storageKey: string;
}

export async function insertAttachment(db: Sequelize, workspaceId: string, attachment: NewAttachment): Promise<AttachmentRecord> {
  const rows = await db.query<AttachmentRow>(
    `INSERT INTO attachments (id, workspace_id, filename, content_type, size, status, origin, source_url, storage_key, ready_at)
     VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, CASE WHEN $6 = 'ready' THEN now() END)
     RETURNING *`,
    {
      bind: [
        attachment.id,
        workspaceId,
        attachment.filename,
        attachment.contentType,
        attachment.size,
        attachment.status,
        attachment.origin,
        attachment.sourceUrl,
        attachment.storageKey,
      ],
      type: QueryTypes.SELECT,
    },
  );
  return toRecord(rows[0]);
}

/** The workspace's uploads, newest first; attachments stored from sends are reached through their messages. */
export async function listAttachments(
  db: Sequelize,
  workspaceId: string,
  page: { limit: number; offset: number },
): Promise<AttachmentRecord[]> {
  const rows = await db.query<AttachmentRow>(
    `SELECT * FROM attachments
     WHERE workspace_id = $1 AND origin = 'upload' AND status <> 'deleted'
     ORDER BY created_at DESC, id DESC LIMIT $2 OFFSET $3`,
    { bind: [workspaceId, page.limit, page.offset], type: QueryTypes.SELECT },
  );
  return rows.map(toRecord);
}

/** Any status, deleted included: callers decide what a deleted attachment means to them. */
export async function findAttachment(db: Sequelize, workspaceId: string, attachmentId: string): Promise<AttachmentRecord | null> {
  const rows = await db.query<AttachmentRow>('SELECT * FROM attachments WHERE workspace_id = $1 AND id = $2', {
    bind: [workspaceId, attachmentId],
    type: QueryTypes.SELECT,
  });
  return rows[0] ? toRecord(rows[0]) : null;
}

export async function findAttachments(db: Sequelize, workspaceId: string, attachmentIds: readonly string[]): Promise<AttachmentRecord[]> {
  if (!attachmentIds.length) return [];
  const rows = await db.query<AttachmentRow>('SELECT * FROM attachments WHERE workspace_id = $1 AND id = ANY($2::uuid[])', {
    bind: [workspaceId, attachmentIds],
    type: QueryTypes.SELECT,
  });
  return rows.map(toRecord);
}

/**
 * A pending upload becomes ready with what the store reports. Only a pending row moves, so a confirm
 * racing a delete or another confirm cannot resurrect or rewrite it; null when it was not pending.
 */
export async function markAttachmentReady(
  db: Sequelize,
  workspaceId: string,
  attachmentId: string,
  stored: { size: number; contentType: string },
): Promise<AttachmentRecord | null> {
  const rows = await db.query<AttachmentRow>(
    `UPDATE attachments SET status = 'ready', size = $3, content_type = $4, ready_at = now()
     WHERE workspace_id = $1 AND id = $2 AND status = 'pending' RETURNING *`,
    { bind: [workspaceId, attachmentId, stored.size, stored.contentType], type: QueryTypes.SELECT },
  );
  return rows[0] ? toRecord(rows[0]) : null;
}

/** Marks a live attachment deleted and returns its storage key; null when there is no live one. */
export async function markAttachmentDeleted(
  db: Sequelize,
  workspaceId: string,
  attachmentId: string,
  transaction?: Transaction,
): Promise<string | null> {
  const rows = await db.query<{ storage_key: string }>(
    `UPDATE attachments SET status = 'deleted', deleted_at = now()
     WHERE workspace_id = $1 AND id = $2 AND status <> 'deleted' RETURNING storage_key`,
    { bind: [workspaceId, attachmentId], type: QueryTypes.SELECT, transaction },
  );
  return rows[0]?.storage_key ?? null;
}

/**
 * Points a live attachment at a new file under the same id (PUT /attachments/:id): name, type, size and
 * storage key change together, and a pending upload becomes ready. Answers the attachment as it now is and
 * the key of the object it replaced (for the caller to remove); null when there is no live attachment.
 */
export async function replaceAttachmentFile(
  db: Sequelize,
  workspaceId: string,
  attachmentId: string,
  file: { filename: string; contentType: string; size: number; storageKey: string },
): Promise<{ attachment: AttachmentRecord; previousKey: string } | null> {
  const rows = await db.query<AttachmentRow & { previous_key: string }>(
    `UPDATE attachments a SET filename = $3, content_type = $4, size = $5, storage_key = $6, status = 'ready', ready_at = now()
     FROM (SELECT id, storage_key FROM attachments WHERE workspace_id = $1 AND id = $2 AND status <> 'deleted' FOR UPDATE) previous
     WHERE a.workspace_id = $1 AND a.id = previous.id
     RETURNING a.*, previous.storage_key AS previous_key`,
    { bind: [workspaceId, attachmentId, file.filename, file.contentType, file.size, file.storageKey], type: QueryTypes.SELECT },
  );
  return rows[0] ? { attachment: toRecord(rows[0]), previousKey: rows[0].previous_key } : null;
}
