import { QueryTypes, type Sequelize, type Transaction } from 'sequelize';
import type { ImportPhase } from '../../core/imports/mapping';
import type { ImportProvider } from '../../core/imports/providers';
import type { RowError } from '../../core/imports/rows';

export interface ImportOptions {
  delimiter?: string;
  consent?: 'unknown' | 'opted_in' | 'opted_out';
  tags?: string[];
  lists?: string[];
}

export interface ImportJobRecord {
  id: string;
  workspaceId: string;
  provider: ImportProvider;
  sourceAttachmentId: string | null;
  sourceUrl: string | null;
  storageKey: string | null;
  mapping: Record<string, string>;
  options: ImportOptions;
  phase: ImportPhase;
  columns: string[] | null;
  total: number | null;
  processed: number;
  created: number;
  updated: number;
  failed: number;
  errors: RowError[];
  checkpointOffset: number;
  checkpointLine: number;
  failureReason: string | null;
  createdAt: Date;
  startedAt: Date | null;
  finishedAt: Date | null;
}

interface ImportJobRow {
  id: string;
  workspace_id: string;
  provider: ImportProvider;
  source_attachment_id: string | null;
  source_url: string | null;
  storage_key: string | null;
  mapping: Record<string, string>;
  options: ImportOptions;
  phase: ImportPhase;
  columns: string[] | null;
  total: number | null;
  processed: number;
  created: number;
  updated: number;
  failed: number;
  errors: RowError[];
  checkpoint_offset: string;
  checkpoint_line: number;
  failure_reason: string | null;
  created_at: Date;
  started_at: Date | null;
  finished_at: Date | null;
}

const toJob = (row: ImportJobRow): ImportJobRecord => ({
  id: row.id,
  workspaceId: row.workspace_id,
  provider: row.provider,
  sourceAttachmentId: row.source_attachment_id,
  sourceUrl: row.source_url,
  storageKey: row.storage_key,
  mapping: row.mapping,
  options: row.options,
  phase: row.phase,
  columns: row.columns,
  total: row.total,
  processed: row.processed,
  created: row.created,
  updated: row.updated,
  failed: row.failed,
  errors: row.errors,
  // bigint comes back as text; a file is far below 2^53 bytes.
  checkpointOffset: Number(row.checkpoint_offset),
  checkpointLine: row.checkpoint_line,
  failureReason: row.failure_reason,
  createdAt: row.created_at,
  startedAt: row.started_at,
  finishedAt: row.finished_at,
});

export interface NewImportJob {
  id: string;
  provider: ImportProvider;
  sourceAttachmentId: string | null;
  sourceUrl: string | null;
  /** Known at once for an attachment; a URL's copy gets one when it is downloaded. */
  storageKey: string | null;
  mapping: Record<string, string>;
  options: ImportOptions;
}

export async function insertImportJob(db: Sequelize, workspaceId: string, job: NewImportJob, transaction?: Transaction): Promise<ImportJobRecord> {
  const rows = await db.query<ImportJobRow>(
    `INSERT INTO import_jobs (id, workspace_id, provider, source_attachment_id, source_url, storage_key, mapping, options)
     VALUES ($1, $2, $3, $4, $5, $6, $7::jsonb, $8::jsonb) RETURNING *`,
    {
      bind: [job.id, workspaceId, job.provider, job.sourceAttachmentId, job.sourceUrl, job.storageKey, JSON.stringify(job.mapping), JSON.stringify(job.options)],
      type: QueryTypes.SELECT,
      transaction,
    },
  );
  return toJob(rows[0]);
}

export async function findImportJob(db: Sequelize, workspaceId: string, importId: string, transaction?: Transaction): Promise<ImportJobRecord | null> {
  const rows = await db.query<ImportJobRow>('SELECT * FROM import_jobs WHERE workspace_id = $1 AND id = $2', {
    bind: [workspaceId, importId],
    type: QueryTypes.SELECT,
    transaction,
  });
  return rows[0] ? toJob(rows[0]) : null;
}

/** Newest first; the row errors are left out of lists (GET /imports/:id has them). */
export async function listImportJobs(db: Sequelize, workspaceId: string, limit: number): Promise<ImportJobRecord[]> {
  const rows = await db.query<ImportJobRow>('SELECT * FROM import_jobs WHERE workspace_id = $1 ORDER BY created_at DESC, id DESC LIMIT $2', {
    bind: [workspaceId, limit],
    type: QueryTypes.SELECT,
  });
  return rows.map((row) => ({ ...toJob(row), errors: [] }));
}

/**
 * Moves a job forward from one of `from` (never out of an end state), with the fields that move with it.
 * Null when the job is no longer in `from` (canceled meanwhile, or the step already done).
 */
export async function moveImportJob(
  db: Sequelize,
  workspaceId: string,
  importId: string,
  from: readonly ImportPhase[],
  to: ImportPhase,
  fields: { storageKey?: string; total?: number; columns?: string[]; failureReason?: string; checkpoint?: { offset: number; line: number } } = {},
): Promise<ImportJobRecord | null> {
  const rows = await db.query<ImportJobRow>(
    `UPDATE import_jobs SET phase = $4,
       storage_key = coalesce($5, storage_key),
       total = coalesce($6::int, total),
       columns = coalesce($7::text[], columns),
       failure_reason = coalesce($8, failure_reason),
       checkpoint_offset = coalesce($9::bigint, checkpoint_offset),
       checkpoint_line = coalesce($10::int, checkpoint_line),
       started_at = coalesce(started_at, now()),
       finished_at = CASE WHEN $4 IN ('completed', 'failed', 'canceled') THEN now() ELSE finished_at END,
       updated_at = now()
     WHERE workspace_id = $1 AND id = $2 AND phase = ANY($3::text[]) RETURNING *`,
    {
      bind: [workspaceId, importId, from, to, fields.storageKey ?? null, fields.total ?? null, fields.columns ?? null, fields.failureReason ?? null, fields.checkpoint?.offset ?? null, fields.checkpoint?.line ?? null],
      type: QueryTypes.SELECT,
    },
  );
  return rows[0] ? toJob(rows[0]) : null;
}

const RUNNING: readonly ImportPhase[] = ['queued', 'downloading', 'counting', 'importing'];

/**
 * The workspace's imports not yet finished, read inside the caller's transaction after locking the workspace
 * row (NO KEY UPDATE: other tables' inserts referencing it do not wait), so two imports started at once
 * cannot both take the last place.
 */
export async function countRunningImports(db: Sequelize, workspaceId: string, transaction: Transaction): Promise<number> {
  await db.query('SELECT 1 FROM workspaces WHERE id = $1 FOR NO KEY UPDATE', { bind: [workspaceId], type: QueryTypes.SELECT, transaction });
  const [row] = await db.query<{ running: number }>('SELECT count(*)::int AS running FROM import_jobs WHERE workspace_id = $1 AND phase = ANY($2::text[])', {
    bind: [workspaceId, RUNNING],
    type: QueryTypes.SELECT,
    transaction,
  });
  return row.running;
}

/** One statement, from any running phase: a batch being written waits for it, or it waits for the batch. */
export function cancelImportJob(db: Sequelize, workspaceId: string, importId: string): Promise<ImportJobRecord | null> {
  return moveImportJob(db, workspaceId, importId, RUNNING, 'canceled');
}

export function failImportJob(db: Sequelize, workspaceId: string, importId: string, reason: string): Promise<ImportJobRecord | null> {
  return moveImportJob(db, workspaceId, importId, RUNNING, 'failed', { failureReason: reason });
}

/** The workspace an import belongs to, for the admin CLI, which is given an import id alone. */
export async function findImportWorkspace(db: Sequelize, importId: string): Promise<string | null> {
  const rows = await db.query<{ workspace_id: string }>('SELECT workspace_id FROM import_jobs WHERE id = $1', { bind: [importId], type: QueryTypes.SELECT });
  return rows[0]?.workspace_id ?? null;
}
