import { normaliseEmail } from '../identities';
import { type AnalyticsConversion, centsOf, ConnectorError, type ContactRef, currencyOf } from './connector';

/**
 * The CSV upload's columns (docs/analytics.md): `external_id`, `email` or `contact_id`, `name`, `value`
 * (major unit, optional: 0), `currency` (optional), `occurred_at` (ISO 8601), `utm_source`, `utm_medium`,
 * `utm_campaign` (optional). Header names are matched case-insensitively; other columns are ignored.
 * A row that breaks a rule stops the sync with its line number: a conversion silently dropped would make
 * every report built on the file wrong without anyone knowing.
 */
export const CSV_COLUMNS = ['external_id', 'email', 'contact_id', 'name', 'value', 'currency', 'occurred_at', 'utm_source', 'utm_medium', 'utm_campaign'] as const;

const REQUIRED = ['external_id', 'name', 'occurred_at'] as const;
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;
const ISO_TIME = /^\d{4}-\d{2}-\d{2}(T\d{2}:\d{2}(:\d{2}(\.\d+)?)?(Z|[+-]\d{2}:?\d{2})?)?$/;
const MAX_TEXT = 500;

/** Whether the header row names what every row needs; the message says what is missing. */
export function checkCsvHeader(header: readonly string[]): void {
  const names = new Set(header.map((name) => name.trim().toLowerCase()));
  const missing: string[] = REQUIRED.filter((column) => !names.has(column));
  if (!names.has('email') && !names.has('contact_id')) missing.push('email or contact_id');
  if (missing.length) throw new ConnectorError('invalid', `line 1: the header lacks ${missing.join(', ')}`);
}

function contactRefOf(row: Record<string, string>, line: number): ContactRef {
  const contactId = row.contact_id?.trim();
  if (contactId) {
    if (!UUID.test(contactId)) throw new ConnectorError('invalid', `line ${line}: contact_id is not a contact id`);
    return { contactId: contactId.toLowerCase() };
  }
  const email = row.email?.trim();
  if (!email) return null;
  const normalised = normaliseEmail(email);
  if (!normalised.ok) throw new ConnectorError('invalid', `line ${line}: email: ${normalised.reason}`);
  return { email: normalised.address };
}

const optional = (value: string | undefined): string | null => (value && value.trim() ? value.trim().slice(0, MAX_TEXT) : null);

/** One data row (`line` is its line in the file, the header being line 1) as a conversion. */
export function conversionOfCsvRow(raw: Record<string, string>, line: number): AnalyticsConversion {
  const row = Object.fromEntries(Object.entries(raw).map(([key, value]) => [key.trim().toLowerCase(), value ?? '']));
  const externalId = row.external_id?.trim();
  if (!externalId) throw new ConnectorError('invalid', `line ${line}: external_id is empty`);
  if (externalId.length > MAX_TEXT) throw new ConnectorError('invalid', `line ${line}: external_id is longer than ${MAX_TEXT} characters`);
  const name = row.name?.trim();
  if (!name) throw new ConnectorError('invalid', `line ${line}: name is empty`);
  const at = row.occurred_at?.trim() ?? '';
  const occurredAt = new Date(at);
  if (!ISO_TIME.test(at) || Number.isNaN(occurredAt.getTime())) {
    throw new ConnectorError('invalid', `line ${line}: occurred_at is not an ISO 8601 time (2026-03-10T12:00:00Z)`);
  }
  const valueCents = row.value?.trim() ? centsOf(row.value) : 0;
  if (valueCents === null) throw new ConnectorError('invalid', `line ${line}: value is not a number from 0 to 1000000000000`);
  const currency = row.currency?.trim() ? currencyOf(row.currency.trim()) : null;
  if (row.currency?.trim() && !currency) throw new ConnectorError('invalid', `line ${line}: currency is not a three-letter ISO 4217 code`);
  return {
    externalId,
    contactRef: contactRefOf(row, line),
    name: name.slice(0, MAX_TEXT),
    valueCents,
    currency,
    occurredAt,
    utm: { source: optional(row.utm_source), medium: optional(row.utm_medium), campaign: optional(row.utm_campaign) },
  };
}
