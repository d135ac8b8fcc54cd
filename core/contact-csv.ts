import type { CsvField } from './csv';

/**
 * The columns of the contacts CSV export. Each names what the import's mapping takes (decisions, Imports),
 * so an export maps back column for column: `email`, `phone`, `telegram` (the primary identities),
 * `tags` (mapped to `tag`), `lists` (mapped to `lists`), and one `attribute:<key>` column per attribute key.
 */
export const CONTACT_CSV_BASE_COLUMNS = ['id', 'createdAt', 'email', 'phone', 'telegram', 'consent', 'tags', 'lists'] as const;

/** Tags and lists are joined with this in one cell (as Mailchimp's TAGS column is); a name holding it reads back as two. */
export const CONTACT_CSV_JOIN = ',';

export interface ContactCsvRow {
  id: string;
  createdAt: Date;
  email: string | null;
  phone: string | null;
  telegram: string | null;
  consent: string | null;
  tags: readonly string[];
  lists: readonly string[];
  attributes: Record<string, unknown>;
}

export function contactCsvHeader(attributeKeys: readonly string[]): string[] {
  return [...CONTACT_CSV_BASE_COLUMNS, ...attributeKeys.map((key) => `attribute:${key}`)];
}

/** A text attribute as it is; a number as a number; booleans, objects and arrays as JSON; absent or null empty. */
function attributeField(value: unknown): CsvField {
  if (value === undefined || value === null) return null;
  if (typeof value === 'string' || typeof value === 'number') return value;
  return JSON.stringify(value);
}

export function contactCsvFields(row: ContactCsvRow, attributeKeys: readonly string[]): CsvField[] {
  return [
    row.id,
    row.createdAt.toISOString(),
    row.email,
    row.phone,
    row.telegram,
    row.consent,
    row.tags.join(CONTACT_CSV_JOIN),
    row.lists.join(CONTACT_CSV_JOIN),
    ...attributeKeys.map((key) => attributeField(row.attributes[key])),
  ];
}
