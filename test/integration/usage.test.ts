import { PLANS, usagePeriodAt } from '../../core/plans';
import { closeUsagePeriod, releaseQuota, reserveQuota } from '../../db/repositories/usage';
import { QueryTypes } from 'sequelize';
import { type ApiHarness, startApi } from '../helpers/api-harness';
import { createWorkspace } from '../helpers/factories';

describe('usage and the quota ledger', () => {
  let api: ApiHarness;
  beforeAll(async () => {
    api = await startApi();
  });
  afterAll(() => api.close());

  it('GET /usage answers the plan and the current month for any valid key', async () => {
    const { apiKey, workspaceId } = await createWorkspace(api.db, { plan: 'starter', scopes: ['utm:read'] });
    const period = usagePeriodAt(new Date());
    await reserveQuota(api.db, workspaceId, PLANS.starter, period, 120);
    const response = await api.call('GET', '/api/v1/usage', { key: apiKey });
    expect(response).toMatchObject({
      status: 200,
      body: {
        plan: 'starter',
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

  it('concurrent reservations never pass the plan: 100 racing reservations of 50 on 3,000 let exactly 60 through', async () => {
    const { workspaceId } = await createWorkspace(api.db, { plan: 'free' });
    const period = usagePeriodAt(new Date());
    const results = await Promise.all(
      Array.from({ length: 100 }, () => reserveQuota(api.db, workspaceId, PLANS.free, period, 50)),
    );
    expect(results.filter((used) => used !== null)).toHaveLength(60);
    expect(Math.max(...results.map((used) => used ?? 0))).toBe(3_000);
  });

  it('a released reservation can be reserved again; pro goes past its limit as overage', async () => {
    const free = await createWorkspace(api.db, { plan: 'free' });
    const period = usagePeriodAt(new Date());
    expect(await reserveQuota(api.db, free.workspaceId, PLANS.free, period, 3_000)).toBe(3_000);
    expect(await reserveQuota(api.db, free.workspaceId, PLANS.free, period, 1)).toBeNull();
    await releaseQuota(api.db, free.workspaceId, period, 10);
    expect(await reserveQuota(api.db, free.workspaceId, PLANS.free, period, 10)).toBe(3_000);

    const pro = await createWorkspace(api.db, { plan: 'pro' });
    expect(await reserveQuota(api.db, pro.workspaceId, PLANS.pro, period, 500_010)).toBe(500_010);
    const response = await api.call('GET', '/api/v1/usage', { key: pro.apiKey });
    expect(response.body).toMatchObject({ messages: { remaining: 0, overage: 10, overageBilling: true } });
  });

  it('closing a month writes each workspace\'s statement once, with overage only where it is billed', async () => {
    const period = usagePeriodAt(new Date('2020-03-15T00:00:00Z'));
    const pro = await createWorkspace(api.db, { plan: 'pro' });
    const free = await createWorkspace(api.db, { plan: 'free' });
    await reserveQuota(api.db, pro.workspaceId, PLANS.pro, period, 500_007);
    await reserveQuota(api.db, free.workspaceId, PLANS.free, period, 2_000);

    await closeUsagePeriod(api.db, period);
    await reserveQuota(api.db, pro.workspaceId, PLANS.pro, period, 5);
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
