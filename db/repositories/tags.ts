import { randomUUID } from 'node:crypto';
import { QueryTypes, type Sequelize, type Transaction } from 'sequelize';

export interface TagRecord {
  id: string;
  name: string;
  color: string | null;
  contactCount: number;
  createdAt: Date;
}

interface TagRow {
  id: string;
  name: string;
  color: string | null;
  contact_count: number;
  created_at: Date;
}

const toTag = (row: TagRow): TagRecord => ({
  id: row.id,
  name: row.name,
  color: row.color,
  contactCount: row.contact_count,
  createdAt: row.created_at,
});

/**
 * Creates the tag unless one with the same name in any case exists; the unique index on lower(name)
 * settles concurrent creations, and the loser reads the winner's row.
 */
export async function upsertTag(
  db: Sequelize,
  workspaceId: string,
  input: { name: string; color: string | null },
): Promise<{ tag: TagRecord; created: boolean }> {
  const inserted = await db.query<TagRow>(
    `INSERT INTO tags (id, workspace_id, name, color) VALUES ($1, $2, $3, $4)
     ON CONFLICT (workspace_id, lower(name)) DO NOTHING RETURNING *`,
    { bind: [randomUUID(), workspaceId, input.name, input.color], type: QueryTypes.SELECT },
  );
  if (inserted[0]) return { tag: toTag(inserted[0]), created: true };
  const existing = await db.query<TagRow>('SELECT * FROM tags WHERE workspace_id = $1 AND lower(name) = lower($2)', {
    bind: [workspaceId, input.name],
    type: QueryTypes.SELECT,
  });
  return { tag: toTag(existing[0]), created: false };
}

/** Tags by name, created where missing (adding tags to a contact by name). */
export async function ensureTags(db: Sequelize, workspaceId: string, names: readonly string[], transaction: Transaction): Promise<TagRecord[]> {
  if (names.length === 0) return [];
  await db.query(
    `INSERT INTO tags (id, workspace_id, name)
     SELECT gen_random_uuid(), $1, name FROM unnest($2::text[]) AS wanted (name)
     ON CONFLICT (workspace_id, lower(name)) DO NOTHING`,
    { bind: [workspaceId, names], transaction },
  );
  const rows = await db.query<TagRow>('SELECT * FROM tags WHERE workspace_id = $1 AND lower(name) = ANY($2::text[])', {
    bind: [workspaceId, names.map((name) => name.toLowerCase())],
    type: QueryTypes.SELECT,
    transaction,
  });
  return rows.map(toTag);
}

export async function findTags(db: Sequelize, workspaceId: string, tagIds: readonly string[], transaction?: Transaction): Promise<TagRecord[]> {
  if (tagIds.length === 0) return [];
  const rows = await db.query<TagRow>('SELECT * FROM tags WHERE workspace_id = $1 AND id = ANY($2::uuid[])', {
    bind: [workspaceId, tagIds],
    type: QueryTypes.SELECT,
    transaction,
  });
  return rows.map(toTag);
}

export async function listTags(db: Sequelize, workspaceId: string): Promise<TagRecord[]> {
  const rows = await db.query<TagRow>('SELECT * FROM tags WHERE workspace_id = $1 ORDER BY created_at DESC, id DESC', {
    bind: [workspaceId],
    type: QueryTypes.SELECT,
  });
  return rows.map(toTag);
}

export async function deleteTag(db: Sequelize, workspaceId: string, tagId: string): Promise<boolean> {
  const rows = await db.query('DELETE FROM tags WHERE workspace_id = $1 AND id = $2 RETURNING id', {
    bind: [workspaceId, tagId],
    type: QueryTypes.SELECT,
  });
  return rows.length === 1;
}

/** Adds tags to a contact; ones it already has are skipped. Returns how many were new. */
export async function tagContact(
  db: Sequelize,
  workspaceId: string,
  contactId: string,
  tagIds: readonly string[],
  transaction: Transaction,
): Promise<number> {
  if (tagIds.length === 0) return 0;
  const rows = await db.query(
    `INSERT INTO contact_tags (workspace_id, contact_id, tag_id)
     SELECT $1, $2, tag_id FROM unnest($3::uuid[]) AS wanted (tag_id)
     ON CONFLICT DO NOTHING RETURNING tag_id`,
    { bind: [workspaceId, contactId, tagIds], type: QueryTypes.SELECT, transaction },
  );
  return rows.length;
}

export async function untagContact(db: Sequelize, workspaceId: string, contactId: string, tagIds: readonly string[]): Promise<number> {
  if (tagIds.length === 0) return 0;
  const rows = await db.query(
    `DELETE FROM contact_tags WHERE workspace_id = $1 AND contact_id = $2 AND tag_id = ANY($3::uuid[]) RETURNING tag_id`,
    { bind: [workspaceId, contactId, tagIds], type: QueryTypes.SELECT },
  );
  return rows.length;
}

export async function tagsOfContact(db: Sequelize, workspaceId: string, contactId: string): Promise<Array<{ id: string; name: string }>> {
  return db.query<{ id: string; name: string }>(
    `SELECT t.id, t.name FROM contact_tags ct JOIN tags t ON t.id = ct.tag_id
     WHERE ct.workspace_id = $1 AND ct.contact_id = $2 ORDER BY lower(t.name), t.id`,
    { bind: [workspaceId, contactId], type: QueryTypes.SELECT },
  );
}
