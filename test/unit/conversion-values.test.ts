import { totalAcrossCurrencies } from '../../core/attribution/currency-totals';
import { eventValueOf, MAX_EVENT_VALUE } from '../../core/attribution/event-value';
import { csvRecord } from '../../core/csv';

describe('eventValueOf', () => {
  it('a numeric value in major units → cents rounded, the currency upper-cased', () => {
    expect(eventValueOf({ value: 19.995, currency: 'eur' })).toEqual({ kind: 'conversion', value: { valueCents: 2000, currency: 'EUR' } });
    expect(eventValueOf({ value: 1500, currency: 'JPY' })).toEqual({ kind: 'conversion', value: { valueCents: 150_000, currency: 'JPY' } });
    expect(eventValueOf({ value: 0 })).toEqual({ kind: 'conversion', value: { valueCents: 0, currency: null } });
  });

  it('no value, or a value that is not a number → no conversion', () => {
    expect(eventValueOf({})).toEqual({ kind: 'none' });
    expect(eventValueOf({ value: '12.50', currency: 'EUR' })).toEqual({ kind: 'none' });
    expect(eventValueOf({ value: null })).toEqual({ kind: 'none' });
  });

  it('a negative, infinite or too large value, or a malformed currency → invalid, naming the field', () => {
    for (const value of [-0.01, Number.POSITIVE_INFINITY, Number.NaN, MAX_EVENT_VALUE + 1]) {
      expect(eventValueOf({ value })).toMatchObject({ kind: 'invalid', field: 'properties.value' });
    }
    for (const currency of ['euro', 'E1R', 12, '']) {
      expect(eventValueOf({ value: 1, currency })).toMatchObject({ kind: 'invalid', field: 'properties.currency' });
    }
  });
});

describe('totalAcrossCurrencies', () => {
  it('no conversions → zero in no currency', () => {
    expect(totalAcrossCurrencies([])).toEqual({ revenueCents: 0, currency: null, byCurrency: [] });
  });

  it('one currency → its total and its code', () => {
    expect(totalAcrossCurrencies([{ currency: 'EUR', conversions: 2, revenueCents: 6550 }])).toMatchObject({ revenueCents: 6550, currency: 'EUR' });
  });

  it('mixed currencies → no currency, the unitless sum the spec requires, each currency apart, highest value first', () => {
    expect(totalAcrossCurrencies([{ currency: 'USD', conversions: 1, revenueCents: 1000 }, { currency: 'EUR', conversions: 2, revenueCents: 6550 }])).toEqual({
      revenueCents: 7550,
      currency: null,
      byCurrency: [{ currency: 'EUR', conversions: 2, revenueCents: 6550 }, { currency: 'USD', conversions: 1, revenueCents: 1000 }],
    });
  });
});

describe('csvRecord', () => {
  it('quotes commas, quotes and line breaks, doubles quotes, ends with CRLF; null is empty', () => {
    expect(csvRecord(['a', 'b,c', 'say "hi"', 'two\nlines', null, 3])).toBe('a,"b,c","say ""hi""","two\nlines",,3\r\n');
  });

  it('a text starting like a formula is prefixed with a quote, so a spreadsheet shows it as text', () => {
    expect(csvRecord(['=SUM(A1)', '+1+cmd|x', '-2-1', '@cmd', '\tx', 'plain-text'])).toBe("'=SUM(A1),'+1+cmd|x,'-2-1,'@cmd,'\tx,plain-text\r\n");
  });

  it('a plain signed number (an E.164 phone, a negative amount) is written as it is: nothing but digits follows the sign', () => {
    expect(csvRecord(['+14155552671', '-2', '-2.50', '+1e5'])).toBe("+14155552671,-2,-2.50,'+1e5\r\n");
  });
});
