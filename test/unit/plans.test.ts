import { periodKey, PLANS, quotaAllows, quotaFigures, usagePeriodAt } from '../../core/plans';

describe('plans and usage periods', () => {
  it('the period is the UTC calendar month, end exclusive', () => {
    const period = usagePeriodAt(new Date('2026-11-30T23:59:59.999Z'));
    expect(period.start.toISOString()).toBe('2026-11-01T00:00:00.000Z');
    expect(period.end.toISOString()).toBe('2026-12-01T00:00:00.000Z');
    expect(periodKey(period)).toBe('2026-11-01');
  });

  it('December rolls into January of the next year', () => {
    const period = usagePeriodAt(new Date('2026-12-15T12:00:00Z'));
    expect(period.end.toISOString()).toBe('2027-01-01T00:00:00.000Z');
    expect(periodKey(usagePeriodAt(period.end))).toBe('2027-01-01');
  });

  it('the plans of the decisions', () => {
    expect(PLANS.free.monthlyMessages).toBe(3_000);
    expect(PLANS.starter.monthlyMessages).toBe(50_000);
    expect(PLANS.pro).toMatchObject({ monthlyMessages: 500_000, overageBilling: true });
  });

  it('a plan without overage refuses past its limit; pro bills it instead', () => {
    expect(quotaAllows(PLANS.free, 2_950, 50)).toBe(true);
    expect(quotaAllows(PLANS.free, 2_951, 50)).toBe(false);
    expect(quotaAllows(PLANS.pro, 500_000, 50)).toBe(true);
  });

  it('figures never go negative and count overage past the limit', () => {
    expect(quotaFigures(PLANS.free, 10)).toEqual({ limit: 3_000, used: 10, remaining: 2_990, overage: 0 });
    expect(quotaFigures(PLANS.pro, 500_120)).toEqual({ limit: 500_000, used: 500_120, remaining: 0, overage: 120 });
  });
});
