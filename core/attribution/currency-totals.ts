/**
 * Money across currencies. A group of conversions in one currency has a total in that currency. The spec
 * makes `revenueCents` a required integer and flags a mix of currencies with `currency: null`, so a mixed
 * group's `revenueCents` is the plain sum of its hundredths, a figure with no unit that a client must not
 * show as money; its `byCurrency` says what each currency earned, and is what our docs tell clients to read.
 * Conversions without a currency (an event that named none) form a bucket of their own, `currency: null`.
 */
export interface CurrencyBucket {
  currency: string | null;
  conversions: number;
  revenueCents: number;
}

export interface CurrencyTotal {
  revenueCents: number;
  currency: string | null;
  /** Highest revenue first. */
  byCurrency: CurrencyBucket[];
}

export function totalAcrossCurrencies(buckets: readonly CurrencyBucket[]): CurrencyTotal {
  const byCurrency = [...buckets].sort((a, b) => b.revenueCents - a.revenueCents || (a.currency ?? '').localeCompare(b.currency ?? ''));
  if (byCurrency.length === 0) return { revenueCents: 0, currency: null, byCurrency };
  if (byCurrency.length === 1) return { revenueCents: byCurrency[0].revenueCents, currency: byCurrency[0].currency, byCurrency };
  return { revenueCents: byCurrency.reduce((sum, bucket) => sum + bucket.revenueCents, 0), currency: null, byCurrency };
}
