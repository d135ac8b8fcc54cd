import type { z } from 'zod';
import { checkMapping, importEntities, importStatusOf } from '../../core/imports/mapping';
import { effectiveMapping } from '../../core/imports/providers';
import type { ImportJobRecord } from '../../db/repositories/import-jobs';
import type { ImportJobSchema } from './schemas';

export function importJobView(job: ImportJobRecord): z.infer<typeof ImportJobSchema> {
  const checked = checkMapping(effectiveMapping(job.provider, job.mapping).mapping);
  return {
    id: job.id,
    provider: job.provider,
    status: importStatusOf(job.phase),
    entities: importEntities(checked.ok ? checked.targets : new Map(), job.options),
    options: { ...job.options },
    phase: job.phase,
    progress: { processed: job.processed, total: job.total, created: job.created, updated: job.updated, failed: job.failed, errors: job.errors },
    error: job.failureReason,
    source: { attachmentId: job.sourceAttachmentId, url: job.sourceUrl },
    mapping: job.mapping,
    startedAt: job.startedAt?.toISOString() ?? null,
    finishedAt: job.finishedAt?.toISOString() ?? null,
    createdAt: job.createdAt.toISOString(),
  };
}
