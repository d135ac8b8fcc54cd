import { z } from 'zod';

export const ContactExportQuery = z.object({
  listId: z.uuid().optional().describe('Only the members of this list'),
  tagId: z.uuid().optional().describe('Only the contacts with this tag'),
  segmentId: z.uuid().optional().describe('Only the contacts the segment matches now (404 when no such segment)'),
});

export type ContactExportQueryInput = z.infer<typeof ContactExportQuery>;

export const ContactCsvSchema = z
  .string()
  .describe(
    'CSV (RFC 4180, CRLF): id, createdAt, email, phone, telegram (primary identities), consent, tags, lists (names joined with ","), ' +
      'then one attribute:<key> column per attribute key, sorted. A text starting with = + - @ tab or CR is prefixed with \' (CSV injection), except a plain signed number.',
  );

const Rows = z.array(z.record(z.string(), z.unknown()));

export const ContactDataExportSchema = z
  .object({
    exportedAt: z.iso.datetime(),
    contact: z.object({ id: z.uuid(), createdAt: z.iso.datetime(), updatedAt: z.iso.datetime() }),
    attributes: z.record(z.string(), z.unknown()),
    consent: z.record(z.string(), z.string()).describe('The consent of each channel\'s primary identity'),
    identities: Rows,
    tags: Rows,
    lists: Rows,
    suppressions: Rows.describe('Suppressions of the contact\'s addresses'),
    messages: Rows.describe('Messages linked to the contact (metadata, no bodies), newest first, each with up to 50 of its events'),
    contactEvents: Rows,
    conversions: Rows,
    orders: Rows,
    inboxMessages: Rows.describe('Mail the contact sent to the workspace\'s inboxes (from one of its email addresses)'),
    enrollments: Rows,
    limits: z.record(z.string(), z.number().int()).describe('The most rows of each kind exported, newest first'),
    truncated: z.array(z.string()).describe('Sections that held more than their limit'),
  })
  .meta({ id: 'ContactDataExport' });
