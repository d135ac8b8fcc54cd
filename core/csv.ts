/**
 * One CSV record (RFC 4180): fields with a comma, quote or line break are quoted, quotes doubled, CRLF ends
 * the record. A text field starting with =, +, -, @, tab or CR is prefixed with a quote character so a
 * spreadsheet opening the export never runs it as a formula (CSV injection): UTM values come from links
 * anyone could tag, contact attributes from anyone who fills a form. A plain signed number (`+14155552671`, an
 * E.164 phone; `-5`) is left as it is: it holds nothing but digits, and a quote would corrupt it on re-import.
 */
export type CsvField = string | number | null;

const NEEDS_QUOTES = /[",\r\n]/;
const FORMULA_START = /^[=+\-@\t\r]/;
const SIGNED_NUMBER = /^[+-]\d+(\.\d+)?$/;

function field(value: CsvField): string {
  if (value === null) return '';
  if (typeof value === 'number') return String(value);
  const safe = FORMULA_START.test(value) && !SIGNED_NUMBER.test(value) ? `'${value}` : value;
  return NEEDS_QUOTES.test(safe) ? `"${safe.replace(/"/g, '""')}"` : safe;
}

export function csvRecord(fields: readonly CsvField[]): string {
  return `${fields.map(field).join(',')}\r\n`;
}
