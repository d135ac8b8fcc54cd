import { QueryTypes, type Sequelize, type Transaction } from 'sequelize';

export type AttachmentStatus = 'pending' | 'ready' | 'deleted';
/** `upload`: created with POST /attachments. `send`: stored from a send's content or url item. */
export type AttachmentOrigin = 'upload' | 'send';

/** A file replacing the attachment's through a signed upload, waiting for its bytes and a confirm. */
export interface AttachmentReplacement {
  storageKey: string;
  filename: string;
  contentType: string;
  size: number;
}

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
  replacement: AttachmentReplacement | null;
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
  replacement: AttachmentReplacement | null;
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
  replacement: row.replacement,
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

/**
 * Marks a live attachment deleted and returns the keys of its objects (its file, and a replacement's
 * waiting for its upload); null when there is no live one.
 */
export async function markAttachmentDeleted(
  db: Sequelize,
  workspaceId: string,
  attachmentId: string,
  transaction?: Transaction,
): Promise<string[] | null> {
  const rows = await db.query<{ storage_key: string; replacement_key: string | null }>(
    `UPDATE attachments a SET status = 'deleted', deleted_at = now(), replacement = NULL
     FROM (SELECT id, replacement ->> 'storageKey' AS replacement_key FROM attachments WHERE workspace_id = $1 AND id = $2 AND status <> 'deleted' FOR UPDATE) previous
     WHERE a.workspace_id = $1 AND a.id = previous.id RETURNING a.storage_key, previous.replacement_key`,
    { bind: [workspaceId, attachmentId], type: QueryTypes.SELECT, transaction },
  );
  const row = rows[0];
  return row ? [row.storage_key, ...(row.replacement_key ? [row.replacement_key] : [])] : null;
}

/**
 * Points a live attachment at a new file under the same id (PUT /attachments/:id, or the confirm of a
 * signed replacement, which names the replacement's key in `fromReplacement` so a newer replacement started
 * meanwhile is not overtaken): name, type, size and storage key change together, a pending upload becomes
 * ready, and any waiting replacement is dropped. Answers the attachment as it now is and the keys of the
 * objects no longer used (for the caller to remove); null when there is no such live attachment.
 */
export async function replaceAttachmentFile(
  db: Sequelize,
  workspaceId: string,
  attachmentId: string,
  file: { filename: string; contentType: string; size: number; storageKey: string },
  fromReplacement?: string,
): Promise<{ attachment: AttachmentRecord; unusedKeys: string[] } | null> {
  const rows = await db.query<AttachmentRow & { previous_key: string; previous_replacement_key: string | null }>(
    `UPDATE attachments a SET filename = $3, content_type = $4, size = $5, storage_key = $6, status = 'ready', ready_at = now(), replacement = NULL
     FROM (SELECT id, storage_key, replacement ->> 'storageKey' AS replacement_key FROM attachments
           WHERE workspace_id = $1 AND id = $2 AND status <> 'deleted' AND ($7::text IS NULL OR replacement ->> 'storageKey' = $7) FOR UPDATE) previous
     WHERE a.workspace_id = $1 AND a.id = previous.id
     RETURNING a.*, previous.storage_key AS previous_key, previous.replacement_key AS previous_replacement_key`,
    { bind: [workspaceId, attachmentId, file.filename, file.contentType, file.size, file.storageKey, fromReplacement ?? null], type: QueryTypes.SELECT },
  );
  const row = rows[0];
  if (!row) return null;
  const unusedKeys = [row.previous_key, row.previous_replacement_key].filter((key): key is string => key !== null && key !== file.storageKey);
  return { attachment: toRecord(row), unusedKeys };
}

/**
 * Sets the replacement a signed upload will fill, in place of any earlier one; the attachment keeps its
 * current file meanwhile. Answers the attachment and the key of the replacement it displaced, or null when
 * there is no live attachment.
 */
export async function setAttachmentReplacement(
  db: Sequelize,
  workspaceId: string,
  attachmentId: string,
  replacement: AttachmentReplacement,
): Promise<{ attachment: AttachmentRecord; displacedKey: string | null } | null> {
  const rows = await db.query<AttachmentRow & { displaced_key: string | null }>(
    `UPDATE attachments a SET replacement = $3::jsonb
     FROM (SELECT id, replacement ->> 'storageKey' AS displaced_key FROM attachments WHERE workspace_id = $1 AND id = $2 AND status <> 'deleted' FOR UPDATE) previous
     WHERE a.workspace_id = $1 AND a.id = previous.id
     RETURNING a.*, previous.displaced_key`,
    { bind: [workspaceId, attachmentId, JSON.stringify(replacement)], type: QueryTypes.SELECT },
  );
  return rows[0] ? { attachment: toRecord(rows[0]), displacedKey: rows[0].displaced_key } : null;
}
