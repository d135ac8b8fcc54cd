import { z } from 'zod';
import { CONSENTS } from '../../core/identities';
import { IMPORT_PHASES } from '../../core/imports/mapping';
import { IMPORT_PROVIDERS } from '../../core/imports/providers';
import { HTTPS_URL_PATTERN, text } from '../http/formats';

const MAX_COLUMNS = 200;

const onlyHttps = (value: string) => {
  try {
    return new URL(value).protocol === 'https:';
  } catch {
    return false;
  }
};

export const CreateImportBody = z
  .object({
    provider: z.enum(IMPORT_PROVIDERS).describe('csv (map every column), mailchimp (audience export) or listmonk (subscriber export): see docs/imports.md'),
    attachmentId: z.uuid().optional().describe('An uploaded attachment (POST /attachments) holding the file'),
    url: z.string().max(2048).refine(onlyHttps, 'Only https URLs are fetched').meta({ pattern: HTTPS_URL_PATTERN }).optional()
      .describe('A public https URL of the file; it is copied into the store before it is read (at most 100 MB)'),
    mapping: z
      .record(z.string().min(1).max(200), z.string().min(1).max(200))
      .refine((mapping) => Object.keys(mapping).length <= MAX_COLUMNS, `At most ${MAX_COLUMNS} columns`)
      .default({})
      .describe('Column name → email, phone, telegram, attribute:<key>, attributes, tag, list:<name>, lists, listmonk:status or ignore; overrides the provider\'s preset'),
    options: z
      .object({
        delimiter: z.string().length(1).optional().describe('The field delimiter (default ,)'),
        consent: z.enum(CONSENTS).optional().describe('Consent of the identities the import adds (default unknown); existing identities keep theirs'),
        tags: z.array(text(100)).max(20).optional().describe('Tags every imported contact gets'),
        lists: z.array(text(100)).max(20).optional().describe('Lists every imported contact joins'),
      })
      .strict()
      .default({}),
  })
  .refine((body) => (body.attachmentId === undefined) !== (body.url === undefined), { message: 'Give attachmentId or url, exactly one', path: ['attachmentId'] })
  .meta({ id: 'CreateImport', oneOf: [{ required: ['attachmentId'], properties: { url: false } }, { required: ['url'], properties: { attachmentId: false } }] });

export type CreateImportInput = z.infer<typeof CreateImportBody>;

export const ImportParams = z.object({ id: z.uuid() });

export const ImportListQuery = z.object({ limit: z.coerce.number().int().min(1).max(100).default(50) });

export const ImportJobSchema = z
  .object({
    id: z.uuid(),
    provider: z.string(),
    status: z.enum(['pending', 'running', 'completed', 'failed', 'canceled']),
    entities: z.record(z.string(), z.boolean()).describe('What the import writes: contacts, attributes, tags, lists, suppressions'),
    options: z.record(z.string(), z.unknown()),
    phase: z.enum(IMPORT_PHASES).nullable().describe('queued, downloading, counting, importing, completed, failed or canceled'),
    progress: z.object({
      processed: z.number().int(),
      total: z.number().int().nullable().describe('Rows after the header; null until counted'),
      created: z.number().int(),
      updated: z.number().int(),
      failed: z.number().int(),
      errors: z.array(z.object({ line: z.number().int(), message: z.string() })).describe('The first 100 failed rows, by line in the file'),
    }),
    error: z.string().nullable().describe('Why the import failed'),
    source: z.object({ attachmentId: z.uuid().nullable(), url: z.string().nullable() }),
    mapping: z.record(z.string(), z.string()),
    startedAt: z.iso.datetime().nullable(),
    finishedAt: z.iso.datetime().nullable(),
    createdAt: z.iso.datetime(),
  })
  .meta({ id: 'ImportJob' });

export const ImportJobListSchema = z.object({ data: z.array(ImportJobSchema) }).meta({ id: 'ListImportJobs' });
