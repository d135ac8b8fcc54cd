import { roundToCent } from './money';

/**
 * The spec's RevenueSummary (and ContactCommerce's money fields), from per-currency sums. Amounts are never
 * added across currencies: with one currency the top-level revenue, refunded, currency and averages are that
 * currency's; with several they are null and byCurrency carries the figures; with no order revenue and
 * refunded are 0 and the currency and averages null. Refunds are declared apart, never subtracted.
 */

export interface CurrencyTotals {
  currency: string;
  /** Orders counted (an order credited in part under `linear` counts once). */
  orders: number;
  revenue: number;
  refunded: number;
}

export interface CurrencyBreakdown {
  currency: string;
  revenue: number;
  refunded: number;
  orders: number;
  averageOrderValue: number | null;
}

export interface RevenueSummary {
  orders: number;
  revenue: number | null;
  refunded: number | null;
  currency: string | null;
  averageOrderValue: number | null;
  revenuePerRecipient: number | null;
  byCurrency: CurrencyBreakdown[];
}

const average = (amount: number, count: number) => (count > 0 ? roundToCent(amount / count) : null);

/** Highest revenue first; equal revenue by currency code, so the order is stable. */
export function currencyBreakdown(totals: readonly CurrencyTotals[]): CurrencyBreakdown[] {
  return totals
    .filter((row) => row.orders > 0)
    .map((row) => ({
      currency: row.currency,
      revenue: roundToCent(row.revenue),
      refunded: roundToCent(row.refunded),
      orders: row.orders,
      averageOrderValue: average(row.revenue, row.orders),
    }))
    .sort((a, b) => b.revenue - a.revenue || a.currency.localeCompare(b.currency));
}

/**
 * `delivered` is the denominator of revenuePerRecipient (the delivered messages of the campaign, automation
 * or period); null leaves it out (ContactCommerce has none).
 */
export function revenueSummary(totals: readonly CurrencyTotals[], delivered: number | null): RevenueSummary {
  const byCurrency = currencyBreakdown(totals);
  const orders = byCurrency.reduce((sum, row) => sum + row.orders, 0);
  if (byCurrency.length > 1) {
    return { orders, revenue: null, refunded: null, currency: null, averageOrderValue: null, revenuePerRecipient: null, byCurrency };
  }
  const only = byCurrency[0];
  if (!only) return { orders: 0, revenue: 0, refunded: 0, currency: null, averageOrderValue: null, revenuePerRecipient: null, byCurrency };
  return {
    orders,
    revenue: only.revenue,
    refunded: only.refunded,
    currency: only.currency,
    averageOrderValue: only.averageOrderValue,
    revenuePerRecipient: delivered ? roundToCent(only.revenue / delivered) : null,
    byCurrency,
  };
}

/** One credited order: its amounts and the share of it the reported entity earns (1 but under `linear`). */
export interface CreditedOrder {
  currency: string;
  total: number;
  refunded: number;
  share: number;
}

/**
 * Per-currency sums of credited orders: an order counts once wherever it earns a share, and brings its
 * share of the total and of the refund (linear splits both, so a report never shows a refund larger than
 * the revenue it belongs to).
 */
export function totalsOf(orders: readonly CreditedOrder[]): CurrencyTotals[] {
  const byCurrency = new Map<string, CurrencyTotals>();
  for (const order of orders) {
    if (order.share <= 0) continue;
    const row = byCurrency.get(order.currency) ?? { currency: order.currency, orders: 0, revenue: 0, refunded: 0 };
    row.orders += 1;
    row.revenue += order.total * order.share;
    row.refunded += order.refunded * order.share;
    byCurrency.set(order.currency, row);
  }
  return [...byCurrency.values()];
}
