import { QueryTypes, type Sequelize, type Transaction } from 'sequelize';

export type SyncStatus = 'running' | 'succeeded' | 'failed';

/** A workspace's analytics connection. The token stays sealed; the API never shows it. */
export interface AnalyticsConnectionRecord {
  workspaceId: string;
  provider: 'matomo';
  baseUrl: string;
  siteId: number;
  tokenSealed: string;
  currency: string | null;
  goalNames: Record<string, string>;
  syncCursor: Date | null;
  lastSync: { status: SyncStatus; startedAt: Date | null; finishedAt: Date | null; imported: number; error: string | null } | null;
  createdAt: Date;
  updatedAt: Date;
}

interface ConnectionRow {
  workspace_id: string;
  provider: 'matomo';
  base_url: string;
  site_id: number;
  token_sealed: string;
  currency: string | null;
  goal_names: Record<string, string>;
  sync_cursor: Date | null;
  last_sync_status: SyncStatus | null;
  last_sync_started_at: Date | null;
  last_sync_finished_at: Date | null;
  last_sync_imported: number;
  last_sync_error: string | null;
  created_at: Date;
  updated_at: Date;
}

const toConnection = (row: ConnectionRow): AnalyticsConnectionRecord => ({
  workspaceId: row.workspace_id,
  provider: row.provider,
  baseUrl: row.base_url,
  siteId: row.site_id,
  tokenSealed: row.token_sealed,
  currency: row.currency,
  goalNames: row.goal_names,
  syncCursor: row.sync_cursor,
  lastSync: row.last_sync_status
    ? { status: row.last_sync_status, startedAt: row.last_sync_started_at, finishedAt: row.last_sync_finished_at, imported: row.last_sync_imported, error: row.last_sync_error }
    : null,
  createdAt: row.created_at,
  updatedAt: row.updated_at,
});

export interface AnalyticsConnectionInput {
  provider: 'matomo';
  baseUrl: string;
  siteId: number;
  tokenSealed: string;
  currency: string | null;
  goalNames: Record<string, string>;
}

export async function findAnalyticsConnection(db: Sequelize, workspaceId: string, transaction?: Transaction): Promise<AnalyticsConnectionRecord | null> {
  const rows = await db.query<ConnectionRow>('SELECT * FROM analytics_connections WHERE workspace_id = $1', {
    bind: [workspaceId],
    type: QueryTypes.SELECT,
    transaction,
  });
  return rows[0] ? toConnection(rows[0]) : null;
}

/**
 * Creates or replaces the connection. Pointing it at another site or server forgets the sync cursor (the
 * first sync of the new site starts from its own beginning); a new token or currency for the same site keeps it.
 */
export async function saveAnalyticsConnection(db: Sequelize, workspaceId: string, input: AnalyticsConnectionInput): Promise<AnalyticsConnectionRecord> {
  const rows = await db.query<ConnectionRow>(
    `INSERT INTO analytics_connections AS a (workspace_id, provider, base_url, site_id, token_sealed, currency, goal_names)
     VALUES ($1, $2, $3, $4, $5, $6, $7::jsonb)
     ON CONFLICT (workspace_id) DO UPDATE SET
       provider = EXCLUDED.provider, base_url = EXCLUDED.base_url, site_id = EXCLUDED.site_id, token_sealed = EXCLUDED.token_sealed,
       currency = EXCLUDED.currency, goal_names = EXCLUDED.goal_names, updated_at = now(),
       sync_cursor = CASE WHEN (a.base_url, a.site_id) = (EXCLUDED.base_url, EXCLUDED.site_id) THEN a.sync_cursor END
     RETURNING *`,
    {
      bind: [workspaceId, input.provider, input.baseUrl, input.siteId, input.tokenSealed, input.currency, JSON.stringify(input.goalNames)],
      type: QueryTypes.SELECT,
    },
  );
  return toConnection(rows[0]);
}

export async function deleteAnalyticsConnection(db: Sequelize, workspaceId: string): Promise<boolean> {
  const rows = await db.query('DELETE FROM analytics_connections WHERE workspace_id = $1 RETURNING 1', {
    bind: [workspaceId],
    type: QueryTypes.SELECT,
  });
  return rows.length > 0;
}

/** A sync begins: status running, its count back to 0. False when the connection is gone. */
export async function markAnalyticsSyncRunning(db: Sequelize, workspaceId: string): Promise<boolean> {
  const rows = await db.query(
    `UPDATE analytics_connections SET last_sync_status = 'running', last_sync_started_at = now(), last_sync_finished_at = NULL,
       last_sync_imported = 0, last_sync_error = NULL
     WHERE workspace_id = $1 RETURNING 1`,
    { bind: [workspaceId], type: QueryTypes.SELECT },
  );
  return rows.length > 0;
}

/**
 * A page is recorded: in the page's transaction, the cursor moves forward (never back) to the page's
 * watermark and the sync's count grows, so a crash after the commit neither loses nor repeats either.
 */
export async function advanceAnalyticsSync(
  db: Sequelize,
  workspaceId: string,
  page: { watermark: Date | null; imported: number },
  transaction: Transaction,
): Promise<void> {
  await db.query(
    `UPDATE analytics_connections
        SET sync_cursor = greatest(sync_cursor, $2::timestamptz), last_sync_imported = last_sync_imported + $3
      WHERE workspace_id = $1`,
    { bind: [workspaceId, page.watermark, page.imported], transaction },
  );
}

export async function finishAnalyticsSync(
  db: Sequelize,
  workspaceId: string,
  outcome: { status: 'succeeded' | 'failed'; error: string | null },
): Promise<void> {
  await db.query(
    `UPDATE analytics_connections SET last_sync_status = $2, last_sync_finished_at = now(), last_sync_error = $3
     WHERE workspace_id = $1`,
    { bind: [workspaceId, outcome.status, outcome.error] },
  );
}
