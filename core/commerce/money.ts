/**
 * Money as the commerce API carries it: amounts are numbers in the currency's major unit (the spec's
 * `total`), stored as `numeric(14, 4)` so a store's 3-decimal currency (KWD) or a unit price in tenths of a
 * cent is kept exactly; conversions count integer cents (the spec's `valueCents`). Currencies are ISO 4217
 * codes, upper-case.
 */

/** Most digits after the point an amount may carry: the column's scale. */
export const AMOUNT_DECIMALS = 4;
/** Below 10^10: the column's precision (14 digits, 4 of them decimals). */
export const MAX_AMOUNT = 9_999_999_999;

/** The codes this runtime's Intl knows (ISO 4217, current ones, upper-case), looked up once. */
export const CURRENCY_CODES: readonly string[] = Intl.supportedValuesOf('currency');

const KNOWN_CURRENCIES = new Set(CURRENCY_CODES);

/** `usd` and `USD` are one currency; anything not a current ISO 4217 code is refused (null). */
export function normaliseCurrency(input: string): string | null {
  const code = input.trim().toUpperCase();
  return /^[A-Z]{3}$/.test(code) && KNOWN_CURRENCIES.has(code) ? code : null;
}

/** Whether a number is an amount the store keeps exactly: not negative, in range, at most 4 decimals. */
export function isAmount(value: number): boolean {
  if (!Number.isFinite(value) || value < 0 || value > MAX_AMOUNT) return false;
  return Math.abs(value * 10 ** AMOUNT_DECIMALS - Math.round(value * 10 ** AMOUNT_DECIMALS)) < 1e-6;
}

/** The text PostgreSQL's numeric reads without a float in between ("19.99", never "19.990000000000002"). */
export function amountText(value: number): string {
  return value.toFixed(AMOUNT_DECIMALS);
}

/** A numeric column's text as the API's number (exact to 4 decimals within MAX_AMOUNT). */
export function amountFromText(text: string): number {
  return Number(text);
}

/** Integer cents of a major-unit amount, the conversion's valueCents: half a cent rounds up. */
export function toCents(amount: number | string): number {
  const [whole, fraction = ''] = (typeof amount === 'number' ? amountText(amount) : amount).split('.');
  const digits = `${fraction}0000`.slice(0, AMOUNT_DECIMALS);
  return Number(whole) * 100 + Math.round(Number(digits) / 100);
}

/** Rounded to the cent (averages, revenue per recipient), without the binary float's half-way misses. */
export function roundToCent(value: number): number {
  return Math.round((value + Number.EPSILON) * 100) / 100;
}

/** A numeric column's text for display: trailing zeros past the cents dropped ("19.9000" → "19.90"). */
export function displayAmount(text: string): string {
  const [whole, fraction = ''] = text.split('.');
  const kept = fraction.replace(/0+$/, '').padEnd(2, '0');
  return `${whole}.${kept}`;
}
