import { amountText, displayAmount, isAmount, normaliseCurrency, roundToCent, toCents } from '../../core/commerce/money';
import { revenueSummary, totalsOf } from '../../core/commerce/revenue-summary';

describe('money', () => {
  it('a currency is a current ISO 4217 code, upper-cased; anything else is refused', () => {
    expect(['usd', ' EUR ', 'jpy', 'US', 'QQQ', 'EURO', '€'].map(normaliseCurrency)).toEqual(['USD', 'EUR', 'JPY', null, null, null, null]);
  });

  it('an amount is non-negative, in the column\'s range, with at most 4 decimals', () => {
    expect([0, 19.99, 0.1234, 9_999_999_999, -0.01, 0.12345, 1e10, Number.NaN, Infinity].map(isAmount)).toEqual([
      true, true, true, true, false, false, false, false, false,
    ]);
  });

  it('cents come from the decimal text, so binary floats never miss a cent', () => {
    expect([19.99, 0.29, 1.005, 100, 0.0049, 0.005, 12.3456].map(toCents)).toEqual([1999, 29, 101, 10000, 0, 1, 1235]);
    expect(toCents('50.0000')).toBe(5000);
    expect(amountText(0.29)).toBe('0.2900');
  });

  it('averages round to the cent; stored amounts show at least two decimals', () => {
    expect([160 / 3, 1.005, 160 / 7, 2.5].map(roundToCent)).toEqual([53.33, 1.01, 22.86, 2.5]);
    expect(['19.9000', '75.5000', '3.1250', '10.0000'].map(displayAmount)).toEqual(['19.90', '75.50', '3.125', '10.00']);
  });
});

describe('revenueSummary', () => {
  it('no order: revenue and refunded 0, currency and averages null', () => {
    expect(revenueSummary([], 10)).toEqual({ orders: 0, revenue: 0, refunded: 0, currency: null, averageOrderValue: null, revenuePerRecipient: null, byCurrency: [] });
  });

  it('one currency: its figures at the top, the refund apart, revenue per delivered message', () => {
    expect(revenueSummary([{ currency: 'USD', orders: 3, revenue: 160, refunded: 20 }], 7)).toEqual({
      orders: 3, revenue: 160, refunded: 20, currency: 'USD', averageOrderValue: 53.33, revenuePerRecipient: 22.86,
      byCurrency: [{ currency: 'USD', revenue: 160, refunded: 20, orders: 3, averageOrderValue: 53.33 }],
    });
  });

  it('one currency and nothing delivered: revenue per recipient is null, not infinite', () => {
    expect(revenueSummary([{ currency: 'USD', orders: 1, revenue: 5, refunded: 0 }], 0).revenuePerRecipient).toBeNull();
  });

  it('several currencies: every top-level amount null, orders summed, byCurrency highest revenue first', () => {
    expect(revenueSummary([{ currency: 'EUR', orders: 1, revenue: 80, refunded: 0 }, { currency: 'USD', orders: 1, revenue: 100, refunded: 5 }], 4)).toEqual({
      orders: 2, revenue: null, refunded: null, currency: null, averageOrderValue: null, revenuePerRecipient: null,
      byCurrency: [
        { currency: 'USD', revenue: 100, refunded: 5, orders: 1, averageOrderValue: 100 },
        { currency: 'EUR', revenue: 80, refunded: 0, orders: 1, averageOrderValue: 80 },
      ],
    });
  });

  it('credited orders: a shared order counts once with its share of total and refund; no share, not counted', () => {
    expect(totalsOf([
      { currency: 'USD', total: 100, refunded: 0, share: 0.5 },
      { currency: 'USD', total: 50, refunded: 20, share: 0.5 },
      { currency: 'USD', total: 30, refunded: 0, share: 1 },
      { currency: 'USD', total: 999, refunded: 0, share: 0 },
    ])).toEqual([{ currency: 'USD', orders: 3, revenue: 105, refunded: 10 }]);
  });
});
