import { ConnectorError } from '../../core/analytics/connector';
import { checkCsvHeader, conversionOfCsvRow } from '../../core/analytics/csv-rows';
import { contactRefOf, conversionsOfVisit, watermarkOf } from '../../providers/matomo/visits';
import { analyticsSyncWorkflowId, resolveSyncWindow } from '../../core/analytics/sync';
import { csvConnector } from '../../providers/analytics-csv/connector';
import { matomoEndpoint } from '../../providers/matomo/connector';

const settings = { currency: 'EUR', goalNames: { '2': 'signup' } };

describe('Matomo visits', () => {
  it('goals and orders become conversions with their ids, names, cents and the visit\'s campaign; abandoned carts and page views do not', () => {
    const conversions = conversionsOfVisit(
      {
        idVisit: 77,
        userId: 'Ann@Example.com',
        campaignSource: 'google',
        campaignMedium: 'cpc',
        campaignName: 'spring',
        actionDetails: [
          { type: 'action', timestamp: 1_700_000_000 },
          { type: 'goal', goalId: 2, goalName: 'Sign up', revenue: 0, timestamp: 1_700_000_010 },
          { type: 'goal', goalId: '5', goalName: 'Lead', revenue: '12.345', timestamp: 1_700_000_020 },
          { type: 'ecommerceOrder', orderId: 'A-1', revenue: 19.99, timestamp: 1_700_000_030 },
          { type: 'ecommerceAbandonedCart', revenue: 5, timestamp: 1_700_000_040 },
        ],
      },
      settings,
    );
    expect(conversions).toEqual([
      { externalId: '77:2:1700000010', contactRef: { email: 'ann@example.com' }, name: 'signup', valueCents: 0, currency: 'EUR', occurredAt: new Date(1_700_000_010_000), utm: { source: 'google', medium: 'cpc', campaign: 'spring' } },
      expect.objectContaining({ externalId: '77:5:1700000020', name: 'Lead', valueCents: 1235 }),
      expect.objectContaining({ externalId: 'order:A-1', name: 'order', valueCents: 1999 }),
    ]);
  });

  it('a user id names a contact by email or by our contact id; anything else is anonymous', () => {
    expect(contactRefOf('0F8FAD5B-D9CB-469F-A165-70867728950E')).toEqual({ contactId: '0f8fad5b-d9cb-469f-a165-70867728950e' });
    expect(contactRefOf(' bob@example.com ')).toEqual({ email: 'bob@example.com' });
    expect(contactRefOf('customer-42')).toBeNull();
    expect(contactRefOf(null)).toBeNull();
  });

  it('the watermark is the latest last action among the visits', () => {
    expect(watermarkOf([{ lastActionTimestamp: 10 }, { lastActionTimestamp: '30' }, { lastActionTimestamp: 20 }])).toEqual(new Date(30_000));
    expect(watermarkOf([])).toBeNull();
  });

  it('the base URL may name the installation or its index.php; the query is the connector\'s own', () => {
    expect(matomoEndpoint('https://stats.example.com/matomo/').toString()).toBe('https://stats.example.com/matomo/index.php');
    expect(matomoEndpoint('https://stats.example.com').toString()).toBe('https://stats.example.com/index.php');
    expect(matomoEndpoint('https://stats.example.com/index.php?module=CoreHome').toString()).toBe('https://stats.example.com/index.php');
  });
});

describe('CSV rows', () => {
  it('a row becomes a conversion; value and currency are optional', () => {
    expect(conversionOfCsvRow({ External_ID: 'r1', email: 'Ann@example.com', name: 'purchase', value: '2.5', currency: 'usd', occurred_at: '2026-03-10T12:00:00Z', utm_source: 'x' }, 2)).toEqual({
      externalId: 'r1', contactRef: { email: 'ann@example.com' }, name: 'purchase', valueCents: 250, currency: 'USD',
      occurredAt: new Date('2026-03-10T12:00:00Z'), utm: { source: 'x', medium: null, campaign: null },
    });
    expect(conversionOfCsvRow({ external_id: 'r2', name: 'signup', occurred_at: '2026-03-10' }, 3)).toMatchObject({ valueCents: 0, currency: null, contactRef: null });
  });

  it.each([
    [{ name: 'a', occurred_at: '2026-03-10' }, 'line 4: external_id is empty'],
    [{ external_id: 'x', name: 'a', occurred_at: 'yesterday' }, 'line 4: occurred_at is not an ISO 8601 time (2026-03-10T12:00:00Z)'],
    [{ external_id: 'x', name: 'a', occurred_at: '2026-03-10', value: '-1' }, 'line 4: value is not a number from 0 to 1000000000000'],
    [{ external_id: 'x', name: 'a', occurred_at: '2026-03-10', currency: 'euro' }, 'line 4: currency is not a three-letter ISO 4217 code'],
    [{ external_id: 'x', name: 'a', occurred_at: '2026-03-10', contact_id: '42' }, 'line 4: contact_id is not a contact id'],
  ])('a row breaking a rule is refused with its line (%j)', (row, message) => {
    expect(() => conversionOfCsvRow(row, 4)).toThrow(new ConnectorError('invalid', message));
  });

  it('a header without the needed columns is refused', () => {
    expect(() => checkCsvHeader(['external_id', 'name', 'occurred_at'])).toThrow('line 1: the header lacks email or contact_id');
    expect(() => checkCsvHeader(['contact_id', 'name'])).toThrow('line 1: the header lacks external_id, occurred_at');
  });
});

describe('the CSV connector', () => {
  const file = [
    'external_id,email,name,occurred_at',
    'a,,x,2026-03-01T00:00:00Z',
    'b,,"two\nlines",2026-03-02T00:00:00Z',
    'c,,x,2026-03-03T00:00:00Z',
    'd,,x,2026-03-04T00:00:00Z',
    'e,,x,yesterday',
  ].join('\n');
  const connector = csvConnector(async () => Buffer.from(file), 2);
  const all = { since: null, until: null };

  it('reads a page of rows at a time, the cursor counting rows read, and skips rows outside the window', async () => {
    const first = await connector.fetchConversions(all, null);
    expect([first.conversions.map((c) => c.externalId), first.nextCursor]).toEqual([['a', 'b'], '2']);
    const second = await connector.fetchConversions({ since: new Date('2026-03-04T00:00:00Z'), until: null }, '2');
    expect([second.conversions.map((c) => c.externalId), second.nextCursor]).toEqual([['d'], '4']);
  });

  it('a bad row is named by its line in the file, quoted line breaks counted', async () => {
    await expect(connector.fetchConversions(all, '4')).rejects.toThrow('line 7: occurred_at is not an ISO 8601 time (2026-03-10T12:00:00Z)');
  });
});

describe('the sync window', () => {
  const now = new Date('2026-03-31T12:00:00Z');
  it('Matomo reads from an hour before the cursor, 30 days back on a first sync, or from what the request says; a CSV only what it says', () => {
    expect(resolveSyncWindow({ source: { kind: 'matomo' } }, new Date('2026-03-30T10:00:00Z'), now)).toEqual({ since: '2026-03-30T09:00:00.000Z', until: now.toISOString() });
    expect(resolveSyncWindow({ source: { kind: 'matomo' } }, null, now)).toEqual({ since: '2026-03-01T12:00:00.000Z', until: now.toISOString() });
    expect(resolveSyncWindow({ source: { kind: 'matomo' }, from: '2026-01-01T00:00:00Z', until: '2026-02-01T00:00:00Z' }, new Date(), now)).toEqual({ since: '2026-01-01T00:00:00.000Z', until: '2026-02-01T00:00:00Z' });
    expect(resolveSyncWindow({ source: { kind: 'csv', attachmentId: 'a' } }, null, now)).toEqual({ since: null, until: null });
  });

  it('one Matomo sync per workspace; one per uploaded file', () => {
    expect(analyticsSyncWorkflowId('w', { kind: 'matomo' })).toBe('analytics-sync:w');
    expect(analyticsSyncWorkflowId('w', { kind: 'csv', attachmentId: 'f' })).toBe('analytics-sync:w:csv:f');
  });
});
