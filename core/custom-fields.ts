/** Types a custom field can declare; a contact attribute under the field's key must hold that type. */
export const FIELD_TYPES = ['text', 'number', 'boolean', 'date', 'select', 'multiselect'] as const;
export type FieldType = (typeof FIELD_TYPES)[number];

export interface FieldDefinition {
  key: string;
  type: FieldType;
  options: string[] | null;
  archived: boolean;
  isSystem: boolean;
}

export interface SystemField extends FieldDefinition {
  id: string;
  label: string;
  groupName: string;
}

const system = (key: string, label: string): SystemField => ({
  id: `system:${key}`,
  key,
  label,
  type: 'text',
  options: null,
  groupName: 'Profile',
  archived: false,
  isSystem: true,
});

/**
 * Fields every workspace has. They are defined here rather than stored per workspace, so they cannot be
 * archived, retyped or taken by a workspace field. The segment preview's `name` is built from
 * firstName and lastName.
 */
export const SYSTEM_FIELDS: readonly SystemField[] = [
  system('firstName', 'First name'),
  system('lastName', 'Last name'),
  system('locale', 'Locale'),
  system('timezone', 'Time zone'),
];

export const FIELD_KEY = /^[A-Za-z][A-Za-z0-9_]{0,63}$/;
export const MAX_TEXT_LENGTH = 5_000;

export type FieldValue = { ok: true; value: unknown } | { ok: false; reason: string };

const DATE_ONLY = /^(\d{4})-(\d{2})-(\d{2})$/;
const DATE_TIME = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}(:\d{2}(\.\d{1,9})?)?(Z|[+-]\d{2}:\d{2})$/;

/**
 * Dates are stored in one canonical form, the UTC ISO 8601 date-time (`2024-05-01T00:00:00.000Z`; a
 * date alone means midnight UTC). One form makes the stored strings sort in time order, which is what
 * lets segments compare them exactly in SQL.
 */
export function canonicalDate(input: string): string | null {
  const dateOnly = DATE_ONLY.exec(input);
  if (dateOnly) {
    const date = new Date(`${input}T00:00:00.000Z`);
    // A calendar date that does not exist (2023-02-30) rolls over in Date; refuse it instead.
    if (Number.isNaN(date.getTime()) || date.toISOString().slice(0, 10) !== input) return null;
    return date.toISOString();
  }
  if (!DATE_TIME.test(input)) return null;
  const date = new Date(input);
  if (Number.isNaN(date.getTime())) return null;
  const canonical = date.toISOString();
  return /^\d{4}-/.test(canonical) ? canonical : null;
}

/** Checks (and for dates, canonicalises) a value for a typed field. Null is handled by the caller. */
export function fieldValue(field: FieldDefinition, value: unknown): FieldValue {
  switch (field.type) {
    case 'text':
      if (typeof value !== 'string') return { ok: false, reason: 'Expected a string' };
      if (value.length > MAX_TEXT_LENGTH) return { ok: false, reason: `Longer than ${MAX_TEXT_LENGTH} characters` };
      return { ok: true, value };
    case 'number':
      return typeof value === 'number' && Number.isFinite(value) ? { ok: true, value } : { ok: false, reason: 'Expected a number' };
    case 'boolean':
      return typeof value === 'boolean' ? { ok: true, value } : { ok: false, reason: 'Expected true or false' };
    case 'date': {
      const canonical = typeof value === 'string' ? canonicalDate(value) : null;
      return canonical ? { ok: true, value: canonical } : { ok: false, reason: 'Expected an ISO 8601 date or date-time' };
    }
    case 'select':
      if (typeof value !== 'string' || !(field.options ?? []).includes(value)) {
        return { ok: false, reason: `Expected one of: ${(field.options ?? []).join(', ')}` };
      }
      return { ok: true, value };
    case 'multiselect': {
      const options = field.options ?? [];
      if (!Array.isArray(value) || !value.every((item) => typeof item === 'string' && options.includes(item))) {
        return { ok: false, reason: `Expected an array of: ${options.join(', ')}` };
      }
      return { ok: true, value: [...new Set(value as string[])] };
    }
  }
}

/** Workspace fields and system fields by key, as attribute validation and segment typing see them. */
export function fieldsByKey(workspaceFields: readonly FieldDefinition[]): Map<string, FieldDefinition> {
  const byKey = new Map<string, FieldDefinition>();
  for (const field of SYSTEM_FIELDS) byKey.set(field.key, field);
  for (const field of workspaceFields) byKey.set(field.key, field);
  return byKey;
}
