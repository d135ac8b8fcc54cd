import { randomUUID } from 'node:crypto';
import { QueryTypes, type Sequelize, type Transaction } from 'sequelize';
import type { Channel } from '../../core/identities';
import { inAudienceSession } from '../audience-session';
import { BindParams } from '../bind-params';

export interface ContactRecord {
  id: string;
  workspaceId: string;
  attributes: Record<string, unknown>;
  createdAt: Date;
  updatedAt: Date;
}

interface ContactRow {
  id: string;
  workspace_id: string;
  attributes: Record<string, unknown>;
  created_at: Date;
  updated_at: Date;
}

const toContact = (row: ContactRow): ContactRecord => ({
  id: row.id,
  workspaceId: row.workspace_id,
  attributes: row.attributes,
  createdAt: row.created_at,
  updatedAt: row.updated_at,
});

export async function insertContact(
  db: Sequelize,
  workspaceId: string,
  attributes: Record<string, unknown>,
  transaction: Transaction,
): Promise<ContactRecord> {
  const rows = await db.query<ContactRow>(
    'INSERT INTO contacts (id, workspace_id, attributes) VALUES ($1, $2, $3::jsonb) RETURNING *',
    { bind: [randomUUID(), workspaceId, JSON.stringify(attributes)], type: QueryTypes.SELECT, transaction },
  );
  return toContact(rows[0]);
}

/**
 * Locks the contact for the rest of the transaction, so concurrent upserts of one contact apply their
 * identity and primary changes one after the other. False when the contact is gone (erased meanwhile).
 */
export async function lockContact(db: Sequelize, workspaceId: string, contactId: string, transaction: Transaction): Promise<boolean> {
  const rows = await db.query('SELECT id FROM contacts WHERE workspace_id = $1 AND id = $2 FOR UPDATE', {
    bind: [workspaceId, contactId],
    type: QueryTypes.SELECT,
    transaction,
  });
  return rows.length === 1;
}

/** Merges in one statement, so two concurrent merges of different keys both survive. */
export async function mergeContactAttributes(
  db: Sequelize,
  workspaceId: string,
  contactId: string,
  change: { set: Record<string, unknown>; unset: readonly string[] },
  transaction: Transaction,
): Promise<void> {
  if (Object.keys(change.set).length === 0 && change.unset.length === 0) return;
  await db.query(
    `UPDATE contacts SET attributes = (attributes || $3::jsonb) - $4::text[], updated_at = now()
     WHERE workspace_id = $1 AND id = $2`,
    { bind: [workspaceId, contactId, JSON.stringify(change.set), change.unset], transaction },
  );
}

export async function findContact(db: Sequelize, workspaceId: string, contactId: string): Promise<ContactRecord | null> {
  const rows = await db.query<ContactRow>('SELECT * FROM contacts WHERE workspace_id = $1 AND id = $2', {
    bind: [workspaceId, contactId],
    type: QueryTypes.SELECT,
  });
  return rows[0] ? toContact(rows[0]) : null;
}

/** The ids among these that are contacts of the workspace. */
export async function existingContactIds(db: Sequelize, workspaceId: string, contactIds: readonly string[]): Promise<Set<string>> {
  const rows = await db.query<{ id: string }>('SELECT id FROM contacts WHERE workspace_id = $1 AND id = ANY($2::uuid[])', {
    bind: [workspaceId, contactIds],
    type: QueryTypes.SELECT,
  });
  return new Set(rows.map((row) => row.id));
}

export interface ContactFilters {
  /** Normalised candidates for an address (one per channel it could be on). */
  identities?: ReadonlyArray<{ channel: Channel; address: string }>;
  tagId?: string;
  listId?: string;
  /** Equality on the text form of attribute values (`plan:pro`, `score:5`). */
  attributes?: ReadonlyArray<{ key: string; value: string }>;
  /** Free text: a case-insensitive substring of an address or of the name attributes. */
  text?: string;
  /** A compiled segment condition over `contacts c`, written against the same parameters. */
  condition?: (params: BindParams, workspace: string) => string;
}

/** The WHERE conditions of contact filters over `contacts c`: the list's and the export's. */
export function filterConditions(filters: ContactFilters, params: BindParams, workspace: string): string[] {
  const where = [`c.workspace_id = ${workspace}`];
  if (filters.identities) {
    where.push(
      `EXISTS (SELECT 1 FROM contact_identities i WHERE i.workspace_id = ${workspace} AND i.contact_id = c.id
        AND (i.channel, i.address) IN (SELECT * FROM unnest(${params.add(filters.identities.map((i) => i.channel), 'text[]')},
          ${params.add(filters.identities.map((i) => i.address), 'text[]')})))`,
    );
  }
  if (filters.tagId) where.push(`EXISTS (SELECT 1 FROM contact_tags t WHERE t.tag_id = ${params.add(filters.tagId, 'uuid')} AND t.contact_id = c.id)`);
  if (filters.listId) where.push(`EXISTS (SELECT 1 FROM list_members m WHERE m.list_id = ${params.add(filters.listId, 'uuid')} AND m.contact_id = c.id)`);
  for (const { key, value } of filters.attributes ?? []) {
    where.push(`(c.attributes ->> ${params.add(key, 'text')}) = ${params.add(value, 'text')}`);
  }
  if (filters.text) {
    const text = params.add(filters.text.toLowerCase(), 'text');
    const inName = ['firstName', 'lastName', 'name'].map((key) => `strpos(lower(c.attributes ->> '${key}'), ${text}) > 0`);
    where.push(
      `(${inName.join(' OR ')} OR EXISTS (SELECT 1 FROM contact_identities i WHERE i.workspace_id = ${workspace}
        AND i.contact_id = c.id AND strpos(i.address, ${text}) > 0))`,
    );
  }
  if (filters.condition) where.push(filters.condition(params, workspace));
  return where;
}

/** A page of contacts, newest first, and how many match in all. */
export async function listContacts(
  db: Sequelize,
  workspaceId: string,
  filters: ContactFilters,
  page: { limit: number; offset: number },
  audienceDb: Sequelize = db,
): Promise<{ rows: ContactRecord[]; total: number }> {
  const params = new BindParams();
  const workspace = params.add(workspaceId, 'uuid');
  const where = filterConditions(filters, params, workspace).join(' AND ');
  const countBind = [...params.values];
  const pageSql = `SELECT c.* FROM contacts c WHERE ${where} ORDER BY c.created_at DESC, c.id DESC
    LIMIT ${params.add(page.limit, 'int')} OFFSET ${params.add(page.offset, 'int')}`;
  // A segment filter makes these audience queries (see audience-session.ts), on `audienceDb`; plain filters are not.
  const run = <T extends object>(sql: string, bind: unknown[]) =>
    filters.condition
      ? inAudienceSession(audienceDb, (transaction) => audienceDb.query<T>(sql, { bind, type: QueryTypes.SELECT, transaction }))
      : db.query<T>(sql, { bind, type: QueryTypes.SELECT });
  const [rows, counted] = await Promise.all([
    run<ContactRow>(pageSql, params.values),
    run<{ total: string }>(`SELECT count(*) AS total FROM contacts c WHERE ${where}`, countBind),
  ]);
  return { rows: rows.map(toContact), total: Number(counted[0].total) };
}

/**
 * Deletes the contact and, by cascade, its identities, tags, list memberships and events. Returns the
 * identities it had (for the suppressions that keep the addresses from coming back), or null when the
 * workspace has no such contact.
 */
export async function deleteContact(
  db: Sequelize,
  workspaceId: string,
  contactId: string,
  transaction: Transaction,
): Promise<Array<{ channel: Channel; address: string }> | null> {
  // Locked first: an upsert adding an identity to this contact either finishes before (and its address
  // is suppressed with the rest) or waits and then finds the contact gone.
  if (!(await lockContact(db, workspaceId, contactId, transaction))) return null;
  const identities = await db.query<{ channel: Channel; address: string }>(
    'SELECT channel, address FROM contact_identities WHERE workspace_id = $1 AND contact_id = $2',
    { bind: [workspaceId, contactId], type: QueryTypes.SELECT, transaction },
  );
  await db.query('DELETE FROM contacts WHERE workspace_id = $1 AND id = $2', { bind: [workspaceId, contactId], transaction });
  return identities;
}
