import type { Sequelize } from 'sequelize';
import { PLANS, type PlanName, quotaFigures, usagePeriodAt } from '../../core/plans';
import { usedInPeriod } from '../../db/repositories/usage';
import type { UsageSnapshot } from './schemas';

export async function usageSnapshot(db: Sequelize, workspaceId: string, planName: PlanName, now: Date): Promise<UsageSnapshot> {
  const plan = PLANS[planName];
  const period = usagePeriodAt(now);
  const figures = quotaFigures(plan, await usedInPeriod(db, workspaceId, period));
  return {
    plan: plan.name,
    messages: {
      ...figures,
      periodStart: period.start.toISOString(),
      periodEnd: period.end.toISOString(),
      overageBilling: plan.overageBilling,
    },
  };
}
