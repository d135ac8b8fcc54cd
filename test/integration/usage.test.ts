import { QueryTypes, type Sequelize } from 'sequelize';
import { PLANS, periodKey, usagePeriodAt } from '../../core/plans';
import { closeUsagePeriod, releaseQuota, reserveQuota } from '../../db/repositories/usage';
import { type ApiHarness, startApi } from '../helpers/api-harness';
import { createTestWorkspace } from '../helpers/workspaces';

const email = { channel: 'email', kind: 'transactional' } as const;

/** The ledger's `used` for the period and the sum of its days, to compare. */
async function ledgerAndDays(db: Sequelize, workspaceId: string, period: string): Promise<{ used: number; days: number }> {
  const [row] = await db.query<{ used: string | null; days: string | null }>(
    `SELECT (SELECT used FROM usage_counters WHERE workspace_id = $1 AND period_start = $2) AS used,
            (SELECT sum(messages) FROM usage_daily WHERE workspace_id = $1 AND day >= $2::date AND day < $2::date + interval '1 month') AS days`,
    { bind: [workspaceId, period], type: QueryTypes.SELECT },
  );
  return { used: Number(row.used ?? 0), days: Number(row.days ?? 0) };
}

describe('usage and the quota ledger', () => {
  let api: ApiHarness;
  beforeAll(async () => {
    api = await startApi();
  });
  afterAll(() => api.close());

  it('GET /usage answers the plan and the current month for any valid key', async () => {
    const { apiKey, workspaceId } = await createTestWorkspace(api, { plan: 'starter', scopes: ['utm:read'] });
    const period = usagePeriodAt(new Date());
    await reserveQuota(api.db, workspaceId, PLANS.starter, period, 120, email);
    const response = await api.call('GET', '/api/v1/usage', { key: apiKey });
    expect(response).toMatchObject({
      status: 200,
      body: {
        plan: 'starter',
        period: periodKey(period).slice(0, 7),
        closed: false,
        messages: {
          limit: 50_000,
          used: 120,
          remaining: 49_880,
          overage: 0,
          overageBilling: false,
          periodStart: period.start.toISOString(),
          periodEnd: period.end.toISOString(),
        },
      },
    });
  });

  it('concurrent reservations never pass the plan: 100 racing reservations of 50 on 3,000 let exactly 60 through, and the days count only those', async () => {
    const { workspaceId } = await createTestWorkspace(api, { plan: 'free' });
    const period = usagePeriodAt(new Date());
    const results = await Promise.all(
      Array.from({ length: 100 }, () => reserveQuota(api.db, workspaceId, PLANS.free, period, 50, email)),
    );
    expect(results.filter((used) => used !== null)).toHaveLength(60);
    expect(Math.max(...results.map((used) => used ?? 0))).toBe(3_000);
    expect(await ledgerAndDays(api.db, workspaceId, periodKey(period))).toEqual({ used: 3_000, days: 3_000 });
  });

  it('a released reservation can be reserved again; pro goes past its limit as overage', async () => {
    const free = await createTestWorkspace(api, { plan: 'free' });
    const period = usagePeriodAt(new Date());
    expect(await reserveQuota(api.db, free.workspaceId, PLANS.free, period, 3_000, email)).toBe(3_000);
    expect(await reserveQuota(api.db, free.workspaceId, PLANS.free, period, 1, email)).toBeNull();
    await releaseQuota(api.db, free.workspaceId, periodKey(period), 10, email);
    expect(await reserveQuota(api.db, free.workspaceId, PLANS.free, period, 10, email)).toBe(3_000);

    const pro = await createTestWorkspace(api, { plan: 'pro' });
    expect(await reserveQuota(api.db, pro.workspaceId, PLANS.pro, period, 500_010, email)).toBe(500_010);
    const response = await api.call('GET', '/api/v1/usage', { key: pro.apiKey });
    expect(response.body).toMatchObject({ messages: { remaining: 0, overage: 10, overageBilling: true } });
  });

  it('reservations and releases of every channel and kind, on several days → the days add up to used, and GET /usage splits them by channel, kind and day', async () => {
    const { workspaceId, apiKey } = await createTestWorkspace(api, { plan: 'pro' });
    const now = new Date();
    const period = usagePeriodAt(now);
    const first = period.start;
    const reserve = (units: number, entry: Parameters<typeof reserveQuota>[5]) => reserveQuota(api.db, workspaceId, PLANS.pro, period, units, entry);
    await reserve(5, email);
    await reserve(7, { channel: 'email', kind: 'campaign', at: first });
    await reserve(2, { channel: 'whatsapp', kind: 'automation', at: first });
    await reserve(3, { channel: 'telegram', kind: 'transactional' });
    await reserve(4, { channel: 'email', kind: 'inbox' });
    // A journey clock a little behind a month's start is still counted in the month it was reserved for.
    await reserve(1, { channel: 'telegram', kind: 'automation', at: new Date(first.getTime() - 60_000) });
    await releaseQuota(api.db, workspaceId, periodKey(period), 2, { channel: 'email', kind: 'campaign', at: first });
    await releaseQuota(api.db, workspaceId, periodKey(period), 1, email);

    expect(await ledgerAndDays(api.db, workspaceId, periodKey(period))).toEqual({ used: 19, days: 19 });
    const { status, body } = await api.call('GET', '/api/v1/usage', { key: apiKey });
    expect(status).toBe(200);
    const usage = body as { messages: Record<string, unknown>; daily: Array<{ date: string; messages: number; byChannel: Record<string, number> }> };
    expect(usage.messages).toMatchObject({
      used: 19,
      byChannel: { email: 13, whatsapp: 2, telegram: 4 },
      byKind: { transactional: 7, campaign: 5, automation: 3, inbox: 4 },
    });
    const today = now.toISOString().slice(0, 10);
    expect(usage.daily).toHaveLength(now.getUTCDate());
    expect(usage.daily[0].date).toBe(periodKey(period));
    expect(usage.daily[usage.daily.length - 1].date).toBe(today);
    expect(usage.daily.reduce((sum, day) => sum + day.messages, 0)).toBe(19);
    if (today !== periodKey(period)) {
      expect(usage.daily[0]).toEqual({ date: periodKey(period), messages: 8, byChannel: { email: 5, whatsapp: 2, telegram: 1 } });
      expect(usage.daily[usage.daily.length - 1]).toEqual({ date: today, messages: 11, byChannel: { email: 8, whatsapp: 0, telegram: 3 } });
      expect(usage.daily.slice(1, -1).every((day) => day.messages === 0)).toBe(true);
    }
  });

  it('GET /usage?period= a closed month → the statement\'s plan and figures and every day of that month; a month not begun, or not a month → 422', async () => {
    const { workspaceId, apiKey } = await createTestWorkspace(api, { plan: 'pro' });
    const period = usagePeriodAt(new Date('2021-02-10T00:00:00Z'));
    await reserveQuota(api.db, workspaceId, PLANS.pro, period, 500_004, { channel: 'email', kind: 'campaign', at: new Date('2021-02-10T12:00:00Z') });
    await reserveQuota(api.db, workspaceId, PLANS.pro, period, 6, { channel: 'telegram', kind: 'transactional', at: new Date('2021-02-28T23:00:00Z') });
    await closeUsagePeriod(api.db, period);

    const { body } = await api.call('GET', '/api/v1/usage?period=2021-02', { key: apiKey });
    const usage = body as { plan: string; closed: boolean; messages: Record<string, unknown>; daily: Array<{ date: string; messages: number }> };
    expect(usage).toMatchObject({
      plan: 'pro',
      period: '2021-02',
      closed: true,
      messages: {
        limit: 500_000, used: 500_010, remaining: 0, overage: 10, overageBilling: true,
        periodStart: '2021-02-01T00:00:00.000Z', periodEnd: '2021-03-01T00:00:00.000Z',
        byChannel: { email: 500_004, whatsapp: 0, telegram: 6 },
        byKind: { transactional: 6, campaign: 500_004, automation: 0, inbox: 0 },
      },
    });
    expect(usage.daily.map((day) => day.date)).toHaveLength(28);
    expect(usage.daily.filter((day) => day.messages > 0)).toEqual([
      { date: '2021-02-10', messages: 500_004, byChannel: { email: 500_004, whatsapp: 0, telegram: 0 } },
      { date: '2021-02-28', messages: 6, byChannel: { email: 0, whatsapp: 0, telegram: 6 } },
    ]);

    const never = await api.call('GET', '/api/v1/usage?period=2020-07', { key: apiKey });
    expect(never.body).toMatchObject({ closed: false, plan: 'pro', messages: { used: 0, byChannel: { email: 0 } } });
    expect((never.body as { daily: unknown[] }).daily).toHaveLength(31);

    const next = new Date();
    next.setUTCMonth(next.getUTCMonth() + 1, 1);
    for (const month of [next.toISOString().slice(0, 7), '2021-13', '2021-2', 'now']) {
      expect(await api.call('GET', `/api/v1/usage?period=${month}`, { key: apiKey })).toMatchObject({ status: 422, body: { error: { fieldErrors: { period: expect.any(Array) } } } });
    }
  });

  it('closing a month writes each workspace\'s statement once, with overage only where it is billed', async () => {
    const period = usagePeriodAt(new Date('2020-03-15T00:00:00Z'));
    const pro = await createTestWorkspace(api, { plan: 'pro' });
    const free = await createTestWorkspace(api, { plan: 'free' });
    await reserveQuota(api.db, pro.workspaceId, PLANS.pro, period, 500_007, email);
    await reserveQuota(api.db, free.workspaceId, PLANS.free, period, 2_000, email);

    await closeUsagePeriod(api.db, period);
    await reserveQuota(api.db, pro.workspaceId, PLANS.pro, period, 5, email);
    await closeUsagePeriod(api.db, period);

    const statements = await api.db.query<{ workspace_id: string; used: string; overage: string; period_end: string }>(
      `SELECT workspace_id, used, overage, to_char(period_end, 'YYYY-MM-DD') AS period_end
       FROM usage_statements WHERE workspace_id IN ($1, $2)`,
      { bind: [pro.workspaceId, free.workspaceId], type: QueryTypes.SELECT },
    );
    expect(statements).toHaveLength(2);
    expect(statements.find((row) => row.workspace_id === pro.workspaceId)).toMatchObject({ used: '500007', overage: '7', period_end: '2020-04-01' });
    expect(statements.find((row) => row.workspace_id === free.workspaceId)).toMatchObject({ used: '2000', overage: '0' });
  });
});
