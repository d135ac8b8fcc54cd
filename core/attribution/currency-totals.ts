/**
 * Money across currencies: amounts of different currencies are never added together. A group of conversions
 * in one currency has a total in that currency; a group that mixes currencies has none (`revenueCents` and
 * `currency` null), and its `byCurrency` says what each currency earned. Conversions without a currency (an
 * event that named none) form a bucket of their own, `currency: null`.
 */
export interface CurrencyBucket {
  currency: string | null;
  conversions: number;
  revenueCents: number;
}

export interface CurrencyTotal {
  revenueCents: number | null;
  currency: string | null;
  /** Highest revenue first. */
  byCurrency: CurrencyBucket[];
}

export function totalAcrossCurrencies(buckets: readonly CurrencyBucket[]): CurrencyTotal {
  const byCurrency = [...buckets].sort((a, b) => b.revenueCents - a.revenueCents || (a.currency ?? '').localeCompare(b.currency ?? ''));
  if (byCurrency.length === 0) return { revenueCents: 0, currency: null, byCurrency };
  if (byCurrency.length === 1) return { revenueCents: byCurrency[0].revenueCents, currency: byCurrency[0].currency, byCurrency };
  return { revenueCents: null, currency: null, byCurrency };
}
