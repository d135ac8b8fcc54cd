import { Context } from '@temporalio/activity';
import type { Sequelize } from 'sequelize';
import { fieldsByKey } from '../core/custom-fields';
import { checkMapping, type ImportPhase, TERMINAL_PHASES } from '../core/imports/mapping';
import { effectiveMapping } from '../core/imports/providers';
import { bindColumns, type ImportRow, readRow, type RowError, type RowReader } from '../core/imports/rows';
import type { BlobStore } from '../db/blob-store';
import { listCustomFields } from '../db/repositories/custom-fields';
import { type BatchResult, commitImportBatch } from '../db/repositories/import-batches';
import { failImportJob, findImportJob, type ImportJobRecord, moveImportJob } from '../db/repositories/import-jobs';
import { fetchPublicFile, PublicFetchError, type PublicFetchOptions } from '../infra/public-fetch';
import { countRows, type FilePosition, readRecords } from './import-file';

export interface ImportSettings {
  /** Rows per batch: one transaction each. */
  batchRows: number;
  /** A slice (one activity call) returns after about this long, so the workflow's history stays small. */
  sliceMs: number;
  /** Largest file fetched from a URL (it is held in memory while copied into the blob store). */
  maxDownloadBytes: number;
  downloadTimeoutMs: number;
}

export const IMPORT_SETTINGS: ImportSettings = {
  batchRows: 5_000,
  // Short, so a slot of the control worker (shared with domain checks and webhooks, which outrank imports
  // there) is never held long: when slots run short, the next free one goes to the higher priority.
  sliceMs: 10_000,
  maxDownloadBytes: 100 * 1024 * 1024,
  downloadTimeoutMs: 5 * 60_000,
};

export interface ImportActivityDeps {
  db: Sequelize;
  blobs: BlobStore;
  /** Overrides of the URL fetcher's options (tests point it at a local stand-in). */
  fetch?: Partial<PublicFetchOptions>;
  settings?: Partial<ImportSettings>;
}

export interface ImportRef {
  workspaceId: string;
  importId: string;
}

/** Where a step left the job: `missing` when the row is not visible (yet, or ever). */
export interface ImportStep {
  state: ImportPhase | 'missing';
}

/** Where a URL's file is copied, so every later read is from our own store. */
export const importStorageKey = (workspaceId: string, importId: string) => `imports/${workspaceId}/${importId}.csv`;

/** What the import steps work with: the worker's dependencies with the settings filled in. */
export interface Imports {
  db: Sequelize;
  blobs: BlobStore;
  settings: ImportSettings;
  fetch?: ImportActivityDeps['fetch'];
}

/** Ends the job failed with its reason; answers the phase it is in (a job already ended keeps its end). */
export async function failJob({ db }: Imports, ref: ImportRef, reason: string): Promise<ImportStep> {
  const failed = await failImportJob(db, ref.workspaceId, ref.importId, reason);
  return { state: failed?.phase ?? (await findImportJob(db, ref.workspaceId, ref.importId))?.phase ?? 'missing' };
}

/** The `downloading` phase: the URL's file, fetched through the SSRF-safe fetcher, into the blob store. */
export async function download(imports: Imports, ref: ImportRef, job: ImportJobRecord): Promise<ImportStep> {
  const { db, blobs, settings } = imports;
  await moveImportJob(db, ref.workspaceId, ref.importId, ['queued'], 'downloading');
  let bytes: Buffer;
  // A download may take minutes (downloadTimeoutMs); the heartbeat says the worker is still at it.
  const context = Context.current();
  const beat = setInterval(() => context.heartbeat({ downloading: true }), 10_000);
  try {
    ({ bytes } = await fetchPublicFile(job.sourceUrl as string, { maxBytes: settings.maxDownloadBytes, timeoutMs: settings.downloadTimeoutMs, ...imports.fetch }));
  } catch (error) {
    if (error instanceof PublicFetchError) return failJob(imports, ref, `The file could not be downloaded: ${error.message}`);
    throw error;
  } finally {
    clearInterval(beat);
  }
  const storageKey = importStorageKey(ref.workspaceId, ref.importId);
  await blobs.put(storageKey, bytes, 'text/csv');
  const moved = await moveImportJob(db, ref.workspaceId, ref.importId, ['downloading'], 'counting', { storageKey });
  return { state: moved?.phase ?? 'canceled' };
}

/** The `counting` phase: the total, the header, and a check that every column the caller named is there. */
export async function count(imports: Imports, ref: ImportRef, job: ImportJobRecord): Promise<ImportStep> {
  const { db, blobs } = imports;
  const stream = await blobs.stream(job.storageKey as string, 0);
  if (!stream) return failJob(imports, ref, 'The file is no longer in the store');
  const context = Context.current();
  const shape = await countRows(stream, job.options.delimiter ?? ',', (rows) => context.heartbeat({ counted: rows }));
  if (!shape) return failJob(imports, ref, 'The file is empty');
  const { mapping, required } = effectiveMapping(job.provider, job.mapping);
  const checked = checkMapping(mapping);
  if (!checked.ok) return failJob(imports, ref, `The mapping is invalid: ${Object.values(checked.problems).join('; ')}`);
  const { bound, missing } = bindColumns(shape.header, checked.targets, required);
  if (missing.length) return failJob(imports, ref, `The file has no column ${missing.map((column) => `"${column}"`).join(', ')}`);
  if (!bound.some((column) => column.target.kind === 'identity')) return failJob(imports, ref, 'None of the file\'s columns maps to email, phone or telegram');
  const moved = await moveImportJob(db, ref.workspaceId, ref.importId, ['counting'], 'importing', {
    total: shape.rows,
    columns: shape.header,
    checkpoint: shape.afterHeader,
  });
  return { state: moved?.phase ?? 'canceled' };
}

export async function rowReader(db: Sequelize, job: ImportJobRecord): Promise<RowReader> {
  const { mapping, required } = effectiveMapping(job.provider, job.mapping);
  const checked = checkMapping(mapping);
  if (!checked.ok) throw new Error('the mapping was checked when counting');
  const header = job.columns ?? [];
  return {
    columns: header.length,
    bound: bindColumns(header, checked.targets, required).bound,
    fields: fieldsByKey(await listCustomFields(db, job.workspaceId)),
    extraTags: job.options.tags ?? [],
    extraLists: job.options.lists ?? [],
  };
}

/**
 * Takes a job from `queued` to `importing`: downloads a URL's file, then counts. Each phase is written
 * when it starts and when it ends, so a retry after a crash redoes only the phase it was in.
 */
export async function prepareImport(imports: Imports, ref: ImportRef): Promise<ImportStep> {
  const { db } = imports;
  for (;;) {
    const job = await findImportJob(db, ref.workspaceId, ref.importId);
    if (!job) return { state: 'missing' };
    if (job.phase === 'queued' && job.sourceAttachmentId) {
      await moveImportJob(db, ref.workspaceId, ref.importId, ['queued'], 'counting');
      continue;
    }
    const step = job.phase === 'queued' || job.phase === 'downloading' ? await download(imports, ref, job) : job.phase === 'counting' ? await count(imports, ref, job) : { state: job.phase };
    if (step.state !== 'counting') return step;
  }
}

/**
 * One slice of the `importing` phase: reads the file from the checkpoint (a ranged GET), and writes
 * batches of `batchRows` rows, each in one transaction with the job's counters and checkpoint, until
 * `sliceMs` has passed or the file ends (the last batch completes the job). Heartbeats after each batch.
 * A job that is no longer `importing` (canceled) writes nothing more.
 */
export async function importSlice(imports: Imports, ref: ImportRef): Promise<ImportStep> {
  const { db, blobs, settings } = imports;
  const job = await findImportJob(db, ref.workspaceId, ref.importId);
  if (!job) return { state: 'missing' };
  if (job.phase !== 'importing') return { state: job.phase };
  const stream = await blobs.stream(job.storageKey as string, job.checkpointOffset);
  if (!stream) return failJob(imports, ref, 'The file is no longer in the store');
  const reader = await rowReader(db, job);
  const context = Context.current();
  const deadline = Date.now() + settings.sliceMs;
  const consent = job.options.consent ?? 'unknown';
  let rows: ImportRow[] = [];
  let errors: RowError[] = [];
  let at: FilePosition = { offset: job.checkpointOffset, line: job.checkpointLine };
  // One batch is written while the next is read and parsed (the database, not the parse, is the slower
  // half); never two at once, so batches commit in file order and the checkpoint only moves forward.
  let writing: Promise<BatchResult> | null = null;
  let batchStart = at.offset;
  const write = (last: boolean) => {
    const batch = { rows, errors, from: batchStart, offset: at.offset, line: at.line, last, consent };
    batchStart = at.offset;
    rows = [];
    errors = [];
    writing = commitImportBatch(db, ref.workspaceId, ref.importId, batch).then((result) => {
      context.heartbeat({ offset: batch.offset, line: batch.line });
      return result;
    });
    // Awaited before the next write or the end of the slice; until then a failure must not go unhandled.
    writing.catch(() => undefined);
  };
  const written = async (): Promise<boolean> => {
    const pending = writing;
    writing = null;
    return pending ? (await pending).state === 'committed' : true;
  };
  // Canceled, or overtaken by another attempt: the job says which; a new slice resumes from its checkpoint.
  const stopped = async (): Promise<ImportStep> => ({ state: (await findImportJob(db, ref.workspaceId, ref.importId))?.phase ?? 'missing' });
  for await (const item of readRecords(stream, at, job.options.delimiter ?? ',')) {
    if (item.kind === 'error') {
      errors.push(item.error);
      continue;
    }
    const read = readRow(reader, item.record, item.line);
    if (read.ok) rows.push(read.row);
    else errors.push(read.error);
    at = item.end;
    if (rows.length + errors.length < settings.batchRows) continue;
    if (!(await written())) return stopped();
    write(false);
    // The stream is dropped here; the next slice opens a new one at the checkpoint.
    if (Date.now() >= deadline) return (await written()) ? { state: 'importing' } : stopped();
  }
  if (!(await written())) return stopped();
  write(true);
  return (await written()) ? { state: 'completed' } : stopped();
}

/**
 * Deletes the copy of a URL's file once its import has ended, whatever the end: the contacts are in the
 * database, and a customer's file is not kept longer than it is needed. An attachment stays (it is the
 * customer's own upload, deleted with DELETE /attachments/:id).
 */
export async function discardImportFile(imports: Imports, ref: ImportRef): Promise<void> {
  const { db, blobs } = imports;
  const job = await findImportJob(db, ref.workspaceId, ref.importId);
  if (!job?.sourceUrl || !job.storageKey || !TERMINAL_PHASES.includes(job.phase)) return;
  await blobs.delete(job.storageKey);
}

/** The import activities; each is a named function above. */
export function createImportActivities(deps: ImportActivityDeps) {
  const imports: Imports = { db: deps.db, blobs: deps.blobs, settings: { ...IMPORT_SETTINGS, ...deps.settings }, fetch: deps.fetch };
  return {
    prepareImport: (ref: ImportRef) => prepareImport(imports, ref),
    importSlice: (ref: ImportRef) => importSlice(imports, ref),
    discardImportFile: (ref: ImportRef) => discardImportFile(imports, ref),
    /** The end state of an import whose workflow gave up (a failure no retry can fix). */
    failImport: (ref: ImportRef & { reason: string }) => failJob(imports, ref, ref.reason),
  };
}

export type ImportActivities = ReturnType<typeof createImportActivities>;
