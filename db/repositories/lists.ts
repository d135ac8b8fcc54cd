import { randomUUID } from 'node:crypto';
import { QueryTypes, type Sequelize } from 'sequelize';

export interface ListRecord {
  id: string;
  name: string;
  contactCount: number;
  createdAt: Date;
}

interface ListRow {
  id: string;
  name: string;
  contact_count: number;
  created_at: Date;
}

const toList = (row: ListRow): ListRecord => ({ id: row.id, name: row.name, contactCount: row.contact_count, createdAt: row.created_at });

/** Creates the list unless one with the same name in any case exists (the unique index settles races). */
export async function upsertList(db: Sequelize, workspaceId: string, name: string): Promise<{ list: ListRecord; created: boolean }> {
  const inserted = await db.query<ListRow>(
    `INSERT INTO lists (id, workspace_id, name) VALUES ($1, $2, $3)
     ON CONFLICT (workspace_id, lower(name)) DO NOTHING RETURNING *`,
    { bind: [randomUUID(), workspaceId, name], type: QueryTypes.SELECT },
  );
  if (inserted[0]) return { list: toList(inserted[0]), created: true };
  const existing = await db.query<ListRow>('SELECT * FROM lists WHERE workspace_id = $1 AND lower(name) = lower($2)', {
    bind: [workspaceId, name],
    type: QueryTypes.SELECT,
  });
  return { list: toList(existing[0]), created: false };
}

export async function findList(db: Sequelize, workspaceId: string, listId: string): Promise<ListRecord | null> {
  const rows = await db.query<ListRow>('SELECT * FROM lists WHERE workspace_id = $1 AND id = $2', {
    bind: [workspaceId, listId],
    type: QueryTypes.SELECT,
  });
  return rows[0] ? toList(rows[0]) : null;
}

export async function existingListIds(db: Sequelize, workspaceId: string, listIds: readonly string[]): Promise<Set<string>> {
  if (listIds.length === 0) return new Set();
  const rows = await db.query<{ id: string }>('SELECT id FROM lists WHERE workspace_id = $1 AND id = ANY($2::uuid[])', {
    bind: [workspaceId, listIds],
    type: QueryTypes.SELECT,
  });
  return new Set(rows.map((row) => row.id));
}

export async function listLists(db: Sequelize, workspaceId: string): Promise<ListRecord[]> {
  const rows = await db.query<ListRow>('SELECT * FROM lists WHERE workspace_id = $1 ORDER BY created_at DESC, id DESC', {
    bind: [workspaceId],
    type: QueryTypes.SELECT,
  });
  return rows.map(toList);
}

export async function deleteList(db: Sequelize, workspaceId: string, listId: string): Promise<boolean> {
  const rows = await db.query('DELETE FROM lists WHERE workspace_id = $1 AND id = $2 RETURNING id', {
    bind: [workspaceId, listId],
    type: QueryTypes.SELECT,
  });
  return rows.length === 1;
}

/**
 * Adds the workspace's contacts among `contactIds` to the list; pairs already there are skipped by the
 * primary key, so a repeat adds 0. Returns how many memberships are new.
 */
export async function addListMembers(db: Sequelize, workspaceId: string, listId: string, contactIds: readonly string[]): Promise<number> {
  const rows = await db.query(
    `INSERT INTO list_members (workspace_id, list_id, contact_id)
     SELECT $1, $2, c.id FROM contacts c WHERE c.workspace_id = $1 AND c.id = ANY($3::uuid[])
     ON CONFLICT DO NOTHING RETURNING contact_id`,
    { bind: [workspaceId, listId, contactIds], type: QueryTypes.SELECT },
  );
  return rows.length;
}

export async function removeListMembers(db: Sequelize, workspaceId: string, listId: string, contactIds: readonly string[]): Promise<number> {
  const rows = await db.query(
    'DELETE FROM list_members WHERE workspace_id = $1 AND list_id = $2 AND contact_id = ANY($3::uuid[]) RETURNING contact_id',
    { bind: [workspaceId, listId, contactIds], type: QueryTypes.SELECT },
  );
  return rows.length;
}

export async function listsOfContact(db: Sequelize, workspaceId: string, contactId: string): Promise<Array<{ id: string; name: string }>> {
  return db.query<{ id: string; name: string }>(
    `SELECT l.id, l.name FROM list_members m JOIN lists l ON l.id = m.list_id
     WHERE m.workspace_id = $1 AND m.contact_id = $2 ORDER BY lower(l.name), l.id`,
    { bind: [workspaceId, contactId], type: QueryTypes.SELECT },
  );
}
