import { readFile } from 'node:fs/promises';
import { basename } from 'node:path';
import type { Writable } from 'node:stream';
import { SingleBar } from 'cli-progress';
import { pino } from 'pino';
import type { Sequelize } from 'sequelize';
import { CreateImportBody } from '../api/imports/schemas';
import { createImportService } from '../api/imports/service';
import type { Config } from '../core/config';
import { importStatusOf } from '../core/imports/mapping';
import { blobStoreOptions, createBlobStore } from '../db/blob-store';
import { findImportJob, findImportWorkspace, type ImportJobRecord } from '../db/repositories/import-jobs';
import { createAttachmentFiles } from '../db/attachment-files';
import { connectTemporal } from '../temporal/connection';

/** How often the watcher reads the job. */
const POLL_MS = 500;

export interface ImportCommandOptions {
  workspace?: string;
  file?: string;
  mapping?: string;
  provider?: string;
  id?: string;
}

/** `email=email,First Name=attribute:firstName`, or the same as a JSON object. */
export function parseMappingFlag(value: string | undefined): Record<string, string> {
  if (!value) return {};
  if (value.trim().startsWith('{')) return JSON.parse(value) as Record<string, string>;
  return Object.fromEntries(
    value.split(',').map((pair) => {
      const at = pair.lastIndexOf('=');
      if (at <= 0) throw new Error(`--mapping: expected column=target, got "${pair}"`);
      return [pair.slice(0, at).trim(), pair.slice(at + 1).trim()];
    }),
  );
}

function progressLine(job: ImportJobRecord): string {
  const total = job.total === null ? '?' : String(job.total);
  return `${job.phase} ${job.processed}/${total} (created ${job.created}, updated ${job.updated}, failed ${job.failed})`;
}

/**
 * Follows an import until it ends: a progress bar on a terminal (rows processed of the total, rows per
 * second, the phase), a line per change otherwise (logs, CI). Resolves with the job as it ended.
 */
export async function watchImport(db: Sequelize, importId: string, out: Writable & { isTTY?: boolean } = process.stderr): Promise<ImportJobRecord> {
  const workspaceId = await findImportWorkspace(db, importId);
  if (!workspaceId) throw new Error(`no import ${importId}`);
  const bar = out.isTTY
    ? new SingleBar({
        stream: out,
        format: '{phase} [{bar}] {percentage}% | {value}/{rows} rows | {rate} rows/s | created {created}, updated {updated}, failed {failed}',
        hideCursor: true,
      })
    : null;
  let last = '';
  let started = false;
  const first = Date.now();
  for (;;) {
    const job = (await findImportJob(db, workspaceId, importId)) as ImportJobRecord;
    const values = {
      phase: job.phase.padEnd(11),
      // Unknown until counted: the bar stays empty rather than full.
      rows: job.total ?? '?',
      created: job.created,
      updated: job.updated,
      failed: job.failed,
      rate: Math.round(job.processed / Math.max(1, (Date.now() - first) / 1000)),
    };
    if (bar) {
      if (!started) bar.start(job.total ?? 1, job.processed, values);
      started = true;
      bar.setTotal(job.total ?? 1);
      bar.update(job.processed, values);
    } else if (progressLine(job) !== last) {
      last = progressLine(job);
      out.write(`${new Date().toISOString()} ${last}\n`);
    }
    const status = importStatusOf(job.phase);
    if (status !== 'pending' && status !== 'running') {
      bar?.stop();
      return job;
    }
    await new Promise((resolve) => setTimeout(resolve, POLL_MS));
  }
}

/**
 * Stores a local file as an attachment of the workspace and starts its import, as POST /imports does (the
 * same checks, the job and its workflow created together). Resolves with the job's id.
 */
export async function createImportFromFile(db: Sequelize, config: Config, options: ImportCommandOptions): Promise<string> {
  const workspaceId = options.workspace as string;
  const path = options.file as string;
  const blobs = createBlobStore(blobStoreOptions(config));
  const temporal = await connectTemporal(config);
  try {
    const attachment = await createAttachmentFiles({ db, blobs }).store(workspaceId, {
      filename: basename(path),
      contentType: 'text/csv',
      bytes: await readFile(path),
      origin: 'upload',
    });
    const body = CreateImportBody.parse({ provider: options.provider ?? 'csv', attachmentId: attachment.id, mapping: parseMappingFlag(options.mapping) });
    const service = createImportService({
      db,
      blobs,
      temporal,
      taskQueuePrefix: config.TASK_QUEUE_PREFIX,
      logger: pino({ level: 'silent' }),
    });
    return (await service.create(workspaceId, body)).id;
  } finally {
    blobs.close();
    await temporal.connection.close();
  }
}
