import { randomUUID } from 'node:crypto';
import type { Client } from '@temporalio/client';
import type { Logger } from 'pino';
import type { Sequelize } from 'sequelize';
import { AppError, isAppError } from '../../core/errors';
import { checkMapping } from '../../core/imports/mapping';
import { effectiveMapping } from '../../core/imports/providers';
import type { BlobStore } from '../../db/blob-store';
import { findAttachment } from '../../db/repositories/attachments';
import { cancelImportJob, countRunningImports, findImportJob, type ImportJobRecord, insertImportJob, listImportJobs } from '../../db/repositories/import-jobs';
import { reconcileUpload } from '../../db/attachment-files';
import { checkPublicUrl, PublicFetchError, type PublicFetchOptions } from '../../infra/public-fetch';
import { signalImportCanceled, startImportWorkflow } from '../../temporal/imports';
import type { CreateImportInput } from './schemas';

export interface ImportServiceDeps {
  db: Sequelize;
  blobs: BlobStore;
  temporal: Client;
  taskQueuePrefix: string;
  logger: Logger;
  /** The URL check's options (tests point its resolver at a stand-in). */
  fetch?: Partial<PublicFetchOptions>;
  /** Imports one workspace may have running at once (WORKSPACE_RUNNING_IMPORTS); unbounded unless given. */
  runningPerWorkspace?: number;
}

/** An import runs for minutes: a refused one is worth trying again in about this long. */
const IMPORT_RETRY_AFTER_SECONDS = 30;

const invalid = (field: string, message: string) => AppError.validation({ formErrors: [], fieldErrors: { [field]: [message] } });

/** The file's place in our store, for an attachment; a pending upload is confirmed here (its first use). */
export async function attachmentSource(deps: ImportServiceDeps, workspaceId: string, attachmentId: string): Promise<string> {
  const attachment = await findAttachment(deps.db, workspaceId, attachmentId);
  if (!attachment || attachment.status === 'deleted') throw invalid('attachmentId', 'No attachment with this id in the workspace');
  try {
    return (await reconcileUpload(deps, workspaceId, attachment)).storageKey;
  } catch (error) {
    if (isAppError(error) && error.code === 'attachment_rejected') throw invalid('attachmentId', error.message);
    throw error;
  }
}

/** Refused now rather than in the background: a URL that is not https or leads to a private address. */
export async function checkImportUrl(deps: ImportServiceDeps, url: string): Promise<void> {
  try {
    await checkPublicUrl(url, deps.fetch);
  } catch (error) {
    if (error instanceof PublicFetchError) throw invalid('url', error.message);
    throw error;
  }
}

export async function getImport({ db }: ImportServiceDeps, workspaceId: string, importId: string): Promise<ImportJobRecord> {
  const job = await findImportJob(db, workspaceId, importId);
  if (!job) throw AppError.notFound('Import');
  return job;
}

/**
 * Checks the body, then inserts the job and starts its workflow in one transaction: if Temporal cannot be
 * reached nothing is created (503), and a job that exists always has a workflow to end it.
 */
export async function createImport(deps: ImportServiceDeps, workspaceId: string, input: CreateImportInput): Promise<ImportJobRecord> {
  const checked = checkMapping(effectiveMapping(input.provider, input.mapping).mapping);
  if (!checked.ok) {
    throw AppError.validation({
      formErrors: checked.problems[''] ? [checked.problems['']] : [],
      fieldErrors: Object.fromEntries(Object.entries(checked.problems).filter(([column]) => column !== '').map(([column, problem]) => [`mapping.${column}`, [problem]])),
    });
  }
  const storageKey = input.attachmentId ? await attachmentSource(deps, workspaceId, input.attachmentId) : null;
  if (input.url) await checkImportUrl(deps, input.url);
  const { db } = deps;
  const id = randomUUID();
  try {
    return await db.transaction(async (transaction) => {
      // The HTTP slot bounds only the start; the import itself runs for minutes in the worker's shared bulk queue.
      const most = deps.runningPerWorkspace;
      if (most !== undefined && (await countRunningImports(db, workspaceId, transaction)) >= most) {
        throw new AppError('rate_limit_exceeded', `This workspace already runs ${most} imports; start another when one finishes`, {
          limit: most,
          retryAfter: IMPORT_RETRY_AFTER_SECONDS,
        });
      }
      const job = await insertImportJob(
        db,
        workspaceId,
        { id, provider: input.provider, sourceAttachmentId: input.attachmentId ?? null, sourceUrl: input.url ?? null, storageKey, mapping: input.mapping, options: input.options },
        transaction,
      );
      await startImportWorkflow(deps.temporal, deps.taskQueuePrefix, { workspaceId, importId: id });
      return job;
    });
  } catch (err) {
    if (isAppError(err)) throw err;
    deps.logger.warn({ err, importId: id }, 'import workflow not started; nothing was created');
    throw new AppError('service_unavailable', 'Imports run on the background workers, which cannot be reached right now. Try again in a minute.');
  }
}

/** The row is the truth (one UPDATE from a running phase); the signal only makes the workflow stop sooner. */
export async function cancelImport(deps: ImportServiceDeps, workspaceId: string, importId: string): Promise<ImportJobRecord> {
  const canceled = await cancelImportJob(deps.db, workspaceId, importId);
  if (!canceled) {
    const job = await getImport(deps, workspaceId, importId);
    if (job.phase === 'canceled') return job;
    throw new AppError('conflict', `The import already ${job.phase === 'completed' ? 'completed' : 'failed'}`);
  }
  await signalImportCanceled(deps.temporal, importId).catch((err: unknown) => deps.logger.warn({ err, importId }, 'import cancel not signaled; the next batch stops it'));
  return canceled;
}

export function createImportService(deps: ImportServiceDeps) {
  return {
    create: (workspaceId: string, input: CreateImportInput) => createImport(deps, workspaceId, input),
    list: (workspaceId: string, limit: number) => listImportJobs(deps.db, workspaceId, limit),
    get: (workspaceId: string, importId: string) => getImport(deps, workspaceId, importId),
    cancel: (workspaceId: string, importId: string) => cancelImport(deps, workspaceId, importId),
  };
}

export type ImportService = ReturnType<typeof createImportService>;
