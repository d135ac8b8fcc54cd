import { contactCsvFields, contactCsvHeader } from '../../core/contact-csv';
import { csvRecord } from '../../core/csv';
import { PLANS, quotaExceeded, usagePeriodAt } from '../../core/plans';
import { daysOf, periodOfMonth, usageBreakdown } from '../../core/usage';

describe('usage by day, channel and kind', () => {
  it('the days of the current month run from its first to today; a past month\'s are all its days', () => {
    const period = usagePeriodAt(new Date('2026-11-03T08:00:00Z'));
    expect(daysOf(period, new Date('2026-11-03T08:00:00Z'))).toEqual(['2026-11-01', '2026-11-02', '2026-11-03']);
    expect(daysOf(periodOfMonth('2024-02'), new Date('2026-11-03T08:00:00Z'))).toHaveLength(29);
    expect(daysOf(periodOfMonth('2026-12'), new Date('2026-12-31T23:59:59Z')).at(-1)).toBe('2026-12-31');
  });

  it('rows fold into totals by channel and kind and one entry per day, zeros included', () => {
    const rows = [
      { day: '2026-11-01', channel: 'email', kind: 'campaign', messages: 5 },
      { day: '2026-11-01', channel: 'telegram', kind: 'automation', messages: 1 },
      { day: '2026-11-03', channel: 'email', kind: 'inbox', messages: 2 },
      { day: '2026-11-03', channel: 'whatsapp', kind: 'transactional', messages: 4 },
    ] as const;
    const breakdown = usageBreakdown(rows, ['2026-11-01', '2026-11-02', '2026-11-03']);
    expect(breakdown.byChannel).toEqual({ email: 7, whatsapp: 4, telegram: 1 });
    expect(breakdown.byKind).toEqual({ transactional: 4, campaign: 5, automation: 1, inbox: 2 });
    expect(breakdown.daily).toEqual([
      { date: '2026-11-01', messages: 6, byChannel: { email: 5, whatsapp: 0, telegram: 1 } },
      { date: '2026-11-02', messages: 0, byChannel: { email: 0, whatsapp: 0, telegram: 0 } },
      { date: '2026-11-03', messages: 6, byChannel: { email: 2, whatsapp: 4, telegram: 0 } },
    ]);
  });

  it('the 402 body carries the period\'s figures and the plan', () => {
    const error = quotaExceeded(PLANS.free, 2_993, 8);
    expect(error.code).toBe('quota_exceeded');
    expect(error.message).toBe('This send needs 8 messages; 7 remain this month');
    expect(error.details).toEqual({ resource: 'messages', limit: 3_000, used: 2_993, remaining: 7, plan: 'free' });
    expect(quotaExceeded(PLANS.starter, 50_100, 3, 'This campaign').details).toMatchObject({ remaining: 0, used: 50_100 });
  });
});

describe('the contacts CSV', () => {
  it('the header is the base columns then attribute:<key> per key; a row joins tags and lists and writes attributes by type', () => {
    const keys = ['nested', 'plan', 'score', 'vip', 'missing'];
    expect(contactCsvHeader(keys)).toEqual(['id', 'createdAt', 'email', 'phone', 'telegram', 'consent', 'tags', 'lists', ...keys.map((key) => `attribute:${key}`)]);
    const fields = contactCsvFields(
      {
        id: 'c1', createdAt: new Date('2026-01-02T03:04:05Z'), email: 'a@example.org', phone: '+14155552671', telegram: null, consent: 'opted_in',
        tags: ['a', 'b'], lists: ['News'], attributes: { nested: { x: [1] }, plan: '=cmd', score: -3, vip: false, gone: null },
      },
      keys,
    );
    expect(csvRecord(fields)).toBe('c1,2026-01-02T03:04:05.000Z,a@example.org,+14155552671,,opted_in,"a,b",News,"{""x"":[1]}",\'=cmd,-3,false,\r\n');
  });
});
