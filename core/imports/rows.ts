import { planAttributes } from '../contact-upsert';
import type { FieldDefinition } from '../custom-fields';
import { type Channel, normaliseAddress } from '../identities';
import type { ImportTarget } from './mapping';

/** One row of the file as it will be written, or why it will not be. */
export interface ImportRow {
  line: number;
  identities: Array<{ channel: Channel; address: string }>;
  attributes: Record<string, unknown>;
  tags: string[];
  lists: string[];
  /** listmonk's `blocklisted`: the row's email addresses are unsubscribed. */
  blocklisted: boolean;
}

export interface RowError {
  line: number;
  message: string;
}

export type ReadRow = { ok: true; row: ImportRow } | { ok: false; error: RowError };

export interface BoundColumn {
  index: number;
  column: string;
  target: ImportTarget;
}

export interface RowReader {
  columns: number;
  bound: BoundColumn[];
  fields: ReadonlyMap<string, FieldDefinition>;
  /** Added to every row (options.tags, options.lists). */
  extraTags: readonly string[];
  extraLists: readonly string[];
}

const MAX_NAME = 100;
const FALSY = new Set(['', '0', 'false', 'no', 'n', 'off']);
const TRUTHY = new Set(['1', 'true', 'yes', 'y', 'on']);

/**
 * Finds each mapped column in the header. Columns the caller named that the file lacks are returned, so the
 * import fails at once saying which; columns only a provider preset names may be absent (exports vary).
 */
export function bindColumns(
  header: readonly string[],
  targets: ReadonlyMap<string, ImportTarget>,
  required: readonly string[],
): { bound: BoundColumn[]; missing: string[] } {
  const position = new Map(header.map((column, index) => [column.trim(), index]));
  const bound: BoundColumn[] = [];
  for (const [column, target] of targets) {
    const index = position.get(column);
    if (index !== undefined && target.kind !== 'ignore') bound.push({ index, column, target });
  }
  return { bound, missing: required.filter((column) => !position.has(column)) };
}

/** Comma-separated names, each trimmed and unquoted (Mailchimp writes TAGS as `"a","b"`). */
export function splitNames(cell: string): string[] {
  return cell
    .split(',')
    .map((name) => name.trim().replace(/^"(.*)"$/, '$1').trim())
    .filter((name) => name.length > 0 && name.length <= MAX_NAME);
}

/** A CSV cell is text; a custom field of another type gets the value its type needs. */
function typedCell(cell: string, field: FieldDefinition | undefined): unknown {
  switch (field?.type) {
    case 'number': {
      const value = Number(cell);
      return cell.trim() !== '' && Number.isFinite(value) ? value : cell;
    }
    case 'boolean': {
      const lower = cell.trim().toLowerCase();
      if (TRUTHY.has(lower)) return true;
      return FALSY.has(lower) ? false : cell;
    }
    case 'multiselect':
      return splitNames(cell);
    default:
      return cell;
  }
}

function parseJsonObject(cell: string): Record<string, unknown> | null {
  try {
    const value: unknown = JSON.parse(cell);
    return value && typeof value === 'object' && !Array.isArray(value) ? (value as Record<string, unknown>) : null;
  } catch {
    return null;
  }
}

const failure = (line: number, message: string): ReadRow => ({ ok: false, error: { line, message } });

/**
 * Reads one record. An empty cell means "nothing here" (never an empty attribute). A row fails, with a
 * message naming the column, when it has the wrong number of cells, an address that is not one, no address
 * at all, an attributes cell that is not a JSON object, or a value its custom field refuses.
 */
export function readRow(reader: RowReader, record: readonly string[], line: number): ReadRow {
  if (record.length !== reader.columns) return failure(line, `Expected ${reader.columns} columns, found ${record.length}`);
  const row: ImportRow = { line, identities: [], attributes: {}, tags: [...reader.extraTags], lists: [...reader.extraLists], blocklisted: false };
  const seen = new Set<string>();
  for (const { index, column, target } of reader.bound) {
    const cell = record[index].trim();
    if (cell === '') continue;
    switch (target.kind) {
      case 'identity': {
        const normalised = normaliseAddress(target.channel, cell);
        if (!normalised.ok) return failure(line, `${column}: ${normalised.reason}`);
        const key = `${target.channel} ${normalised.address}`;
        if (!seen.has(key)) row.identities.push({ channel: target.channel, address: normalised.address });
        seen.add(key);
        break;
      }
      case 'attribute':
        row.attributes[target.key] = typedCell(cell, reader.fields.get(target.key));
        break;
      case 'attributes': {
        const parsed = parseJsonObject(cell);
        if (!parsed) return failure(line, `${column}: expected a JSON object`);
        Object.assign(row.attributes, parsed);
        break;
      }
      case 'tag':
        row.tags.push(...splitNames(cell));
        break;
      case 'list':
        if (!FALSY.has(cell.toLowerCase())) row.lists.push(target.name);
        break;
      case 'lists':
        row.lists.push(...splitNames(cell));
        break;
      case 'status':
        row.blocklisted = cell.toLowerCase() === 'blocklisted';
        break;
      case 'ignore':
        break;
    }
  }
  if (row.identities.length === 0) return failure(line, 'No email, phone or telegram in this row');
  const attributes = planAttributes(row.attributes, reader.fields);
  const refused = Object.entries(attributes.errors)[0];
  if (refused) return failure(line, `${refused[0]}: ${refused[1].join('; ')}`);
  row.attributes = attributes.set;
  return { ok: true, row };
}
