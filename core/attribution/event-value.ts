/**
 * The convention that makes a behavioural event a conversion (decisions.md): `properties.value`, a number in
 * the currency's major unit, and optionally `properties.currency`, a three-letter ISO 4217 code. Values are
 * stored as `valueCents` = round(value × 100) whatever the currency: "cents" are hundredths of the major unit,
 * so a currency without a minor unit (JPY 1500) is stored as 150000 and reads back as 1500. A `value` that is
 * not a number (a string a client uses for something else) makes no conversion; a number out of range or a
 * malformed currency is refused, so nothing the database would reject is accepted.
 */
export type EventValue = { valueCents: number; currency: string | null };

export type EventValueOutcome = { kind: 'none' } | { kind: 'conversion'; value: EventValue } | { kind: 'invalid'; field: string; message: string };

/** Largest value accepted (major units): keeps cents well inside a bigint and a JS safe integer. */
export const MAX_EVENT_VALUE = 1_000_000_000_000;

const CURRENCY = /^[A-Za-z]{3}$/;

export function eventValueOf(properties: Record<string, unknown>): EventValueOutcome {
  const { value, currency } = properties;
  if (typeof value !== 'number') return { kind: 'none' };
  if (!Number.isFinite(value) || value < 0 || value > MAX_EVENT_VALUE) {
    return { kind: 'invalid', field: 'properties.value', message: `A conversion value is a number from 0 to ${MAX_EVENT_VALUE}` };
  }
  if (currency !== undefined && currency !== null && (typeof currency !== 'string' || !CURRENCY.test(currency))) {
    return { kind: 'invalid', field: 'properties.currency', message: 'A three-letter ISO 4217 currency code (EUR, USD, JPY)' };
  }
  return { kind: 'conversion', value: { valueCents: Math.round(value * 100), currency: typeof currency === 'string' ? currency.toUpperCase() : null } };
}
