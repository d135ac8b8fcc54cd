import { randomUUID } from 'node:crypto';
import { QueryTypes, type Sequelize, type Transaction } from 'sequelize';
import type { PlanName } from '../../core/plans';
import type { Grant } from '../../core/scopes';

export interface ApiKeyRecord {
  id: string;
  workspaceId: string;
  name: string | null;
  displayPrefix: string;
  scopes: Grant[];
  createdAt: Date;
}

/** What authentication needs to know about the caller, read in one indexed query per cache miss. */
export interface KeyOwner {
  keyId: string;
  workspaceId: string;
  scopes: Grant[];
  plan: PlanName;
}

interface ApiKeyRow {
  id: string;
  workspace_id: string;
  name: string | null;
  display_prefix: string;
  scopes: Grant[];
  created_at: Date;
}

const toRecord = (row: ApiKeyRow): ApiKeyRecord => ({
  id: row.id,
  workspaceId: row.workspace_id,
  name: row.name,
  displayPrefix: row.display_prefix,
  scopes: row.scopes,
  createdAt: row.created_at,
});

export interface NewApiKey {
  name: string | null;
  hash: string;
  displayPrefix: string;
  scopes: readonly Grant[];
}

export async function insertApiKey(db: Sequelize, workspaceId: string, key: NewApiKey, transaction?: Transaction): Promise<ApiKeyRecord> {
  const rows = await db.query<ApiKeyRow>(
    `INSERT INTO api_keys (id, workspace_id, name, key_hash, display_prefix, scopes)
     VALUES ($1, $2, $3, $4, $5, $6) RETURNING *`,
    {
      bind: [randomUUID(), workspaceId, key.name, key.hash, key.displayPrefix, key.scopes],
      type: QueryTypes.SELECT,
      transaction,
    },
  );
  return toRecord(rows[0]);
}

/**
 * Inserts the key unless the workspace already holds `cap` active keys; then answers how many it holds.
 * The workspace row is locked first (NO KEY UPDATE, which other tables' inserts referencing it do not wait
 * for), so two creates at once cannot both take the last place.
 */
export async function insertApiKeyWithin(
  db: Sequelize,
  workspaceId: string,
  key: NewApiKey,
  cap: number,
): Promise<{ record: ApiKeyRecord } | { refused: { used: number } }> {
  return db.transaction(async (transaction) => {
    await db.query('SELECT 1 FROM workspaces WHERE id = $1 FOR NO KEY UPDATE', { bind: [workspaceId], type: QueryTypes.SELECT, transaction });
    const [{ used }] = await db.query<{ used: number }>('SELECT count(*)::int AS used FROM api_keys WHERE workspace_id = $1 AND revoked_at IS NULL', {
      bind: [workspaceId],
      type: QueryTypes.SELECT,
      transaction,
    });
    if (used >= cap) return { refused: { used } };
    return { record: await insertApiKey(db, workspaceId, key, transaction) };
  });
}

export async function listApiKeys(db: Sequelize, workspaceId: string): Promise<ApiKeyRecord[]> {
  const rows = await db.query<ApiKeyRow>(
    `SELECT * FROM api_keys WHERE workspace_id = $1 AND revoked_at IS NULL ORDER BY created_at DESC, id`,
    { bind: [workspaceId], type: QueryTypes.SELECT },
  );
  return rows.map(toRecord);
}

export async function findActiveApiKey(db: Sequelize, workspaceId: string, keyId: string): Promise<ApiKeyRecord | null> {
  const rows = await db.query<ApiKeyRow>('SELECT * FROM api_keys WHERE workspace_id = $1 AND id = $2 AND revoked_at IS NULL', {
    bind: [workspaceId, keyId],
    type: QueryTypes.SELECT,
  });
  return rows[0] ? toRecord(rows[0]) : null;
}

/**
 * Revokes an active key of the workspace. Returns the key's hash (so caches can evict it), or null
 * when the workspace has no such active key.
 */
export async function revokeApiKey(db: Sequelize, workspaceId: string, keyId: string): Promise<string | null> {
  const rows = await db.query<{ key_hash: string }>(
    `UPDATE api_keys SET revoked_at = now()
     WHERE workspace_id = $1 AND id = $2 AND revoked_at IS NULL RETURNING key_hash`,
    { bind: [workspaceId, keyId], type: QueryTypes.SELECT },
  );
  return rows[0]?.key_hash ?? null;
}

/** The key's workspace, for operators (the admin CLI) who revoke by key id alone. */
export async function findApiKeyWorkspace(db: Sequelize, keyId: string): Promise<string | null> {
  const rows = await db.query<{ workspace_id: string }>('SELECT workspace_id FROM api_keys WHERE id = $1', {
    bind: [keyId],
    type: QueryTypes.SELECT,
  });
  return rows[0]?.workspace_id ?? null;
}

/**
 * The only lookup not scoped by workspace: authentication is what finds the workspace. The hash is
 * the unique index, so this is one index probe.
 */
export async function findKeyOwnerByHash(db: Sequelize, hash: string): Promise<KeyOwner | null> {
  const rows = await db.query<{ id: string; workspace_id: string; scopes: Grant[]; plan: PlanName }>(
    `SELECT k.id, k.workspace_id, k.scopes, w.plan
     FROM api_keys k JOIN workspaces w ON w.id = k.workspace_id
     WHERE k.key_hash = $1 AND k.revoked_at IS NULL`,
    { bind: [hash], type: QueryTypes.SELECT },
  );
  const row = rows[0];
  return row ? { keyId: row.id, workspaceId: row.workspace_id, scopes: row.scopes, plan: row.plan } : null;
}
