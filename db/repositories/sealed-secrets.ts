import { QueryTypes, type Sequelize } from 'sequelize';
import type { SealedColumn } from '../../core/secrets';

/**
 * Every column of the schema that holds a sealed value (core/secrets.ts), for `secrets:reseal`. A new
 * sealed column must be added here, or a rotation would leave it under the old key. This is the one
 * repository that walks every workspace: re-sealing is an operator's maintenance, not a tenant's request.
 */
export interface SealedColumnSpec {
  table: string;
  /** The row's key: `id`, or `workspace_id` where the table has one row per workspace. */
  key: 'id' | 'workspace_id';
  column: string;
  /** What the value is bound to, besides its workspace. */
  context: SealedColumn;
  /** The column naming the row in the value's binding (core/secrets.ts, SealContext), where a workspace has several rows. */
  row: 'id' | 'name' | null;
}

export const SEALED_COLUMNS: readonly SealedColumnSpec[] = [
  { table: 'domains', key: 'id', column: 'dkim_private_key_sealed', context: 'domains.dkim_private_key', row: 'name' },
  { table: 'webhooks', key: 'id', column: 'secret_sealed', context: 'webhooks.secret', row: 'id' },
  { table: 'webhooks', key: 'id', column: 'previous_secret_sealed', context: 'webhooks.secret', row: 'id' },
  { table: 'telegram_integrations', key: 'workspace_id', column: 'bot_token_sealed', context: 'telegram_integrations.bot_token', row: null },
  { table: 'telegram_integrations', key: 'workspace_id', column: 'webhook_secret_sealed', context: 'telegram_integrations.webhook_secret', row: null },
  { table: 'twilio_integrations', key: 'workspace_id', column: 'auth_token_sealed', context: 'twilio_integrations.auth_token', row: null },
  { table: 'analytics_connections', key: 'workspace_id', column: 'token_sealed', context: 'analytics_connections.token', row: null },
];

export interface SealedValue {
  rowKey: string;
  workspaceId: string;
  /** The value of the spec's `row` column, or null. */
  row: string | null;
  sealed: string;
}

/**
 * The next rows (by key, after `afterKey`) whose value does not start with `currentPrefix`: sealed under
 * another key or in the old format. Keyset paging, so each batch is an index range however many are left.
 * Table and column names come from SEALED_COLUMNS only, never from input.
 */
export async function findValuesToReseal(
  db: Sequelize,
  spec: SealedColumnSpec,
  currentPrefix: string,
  afterKey: string | null,
  limit: number,
): Promise<SealedValue[]> {
  return db.query<SealedValue>(
    `SELECT ${spec.key}::text AS "rowKey", workspace_id::text AS "workspaceId", ${spec.row === null ? 'NULL' : `${spec.row}::text`} AS row, ${spec.column} AS sealed
     FROM ${spec.table}
     WHERE ${spec.column} IS NOT NULL AND NOT starts_with(${spec.column}, $1) AND ($2::uuid IS NULL OR ${spec.key} > $2::uuid)
     ORDER BY ${spec.key}
     LIMIT $3`,
    { bind: [currentPrefix, afterKey, limit], type: QueryTypes.SELECT },
  );
}

/**
 * Writes a batch of re-sealed values in one statement, each only if its row still holds the value that was
 * read: a secret saved or rotated through the API in between (already under the current key) is left as it
 * is. `updated_at` stays: the secret did not change. Returns how many rows were written.
 */
export async function replaceSealedValues(db: Sequelize, spec: SealedColumnSpec, changes: ReadonlyArray<{ value: SealedValue; resealed: string }>): Promise<number> {
  if (changes.length === 0) return 0;
  const rows = await db.query(
    `UPDATE ${spec.table} AS t SET ${spec.column} = x.resealed
     FROM json_to_recordset($1::json) AS x(workspace_id uuid, row_key uuid, sealed text, resealed text)
     WHERE t.workspace_id = x.workspace_id AND t.${spec.key} = x.row_key AND t.${spec.column} = x.sealed
     RETURNING 1`,
    {
      bind: [JSON.stringify(changes.map(({ value, resealed }) => ({ workspace_id: value.workspaceId, row_key: value.rowKey, sealed: value.sealed, resealed })))],
      type: QueryTypes.SELECT,
    },
  );
  return rows.length;
}
