import type { Sequelize } from 'sequelize';
import { AppError } from '../../core/errors';
import { isPlanName, PLANS, type PlanName, quotaFigures, type UsagePeriod, usagePeriodAt } from '../../core/plans';
import { daysOf, periodOfMonth, usageBreakdown } from '../../core/usage';
import { inboundStorageUsed } from '../../db/repositories/inbox-storage';
import { findUsageStatement, usageDays, usedInPeriod } from '../../db/repositories/usage';
import type { UsageSnapshot } from './schemas';

/** The figures of the period: a closed month's from its statement (its plan then), else the ledger's with the plan now. */
async function periodFigures(db: Sequelize, workspaceId: string, planNow: PlanName, period: UsagePeriod) {
  const statement = await findUsageStatement(db, workspaceId, period);
  if (!statement) {
    const plan = PLANS[planNow];
    return { closed: false, plan: plan.name, overageBilling: plan.overageBilling, ...quotaFigures(plan, await usedInPeriod(db, workspaceId, period)) };
  }
  const { limit, used, overage } = statement;
  const overageBilling = isPlanName(statement.plan) && PLANS[statement.plan].overageBilling;
  return { closed: true, plan: statement.plan, overageBilling, limit, used, overage, remaining: Math.max(0, limit - used) };
}

/**
 * Usage of the month `month` (YYYY-MM; the current one when absent) as of `now`: the quota figures, the
 * units by channel and kind, and each day so far; beside them, the received mail held against its quota. Months after the current one have no usage yet (422).
 */
export async function usageSnapshot(
  db: Sequelize, workspaceId: string, planNow: PlanName, now: Date, month: string | undefined, inboundQuotaBytes: number,
): Promise<UsageSnapshot> {
  const period = month ? periodOfMonth(month) : usagePeriodAt(now);
  if (period.start > now) throw AppError.validation({ formErrors: [], fieldErrors: { period: ['The month has not begun yet'] } });
  const [{ closed, plan, overageBilling, ...figures }, rows, stored] = await Promise.all([
    periodFigures(db, workspaceId, planNow, period),
    usageDays(db, workspaceId, period),
    inboundStorageUsed(db, workspaceId),
  ]);
  const { byChannel, byKind, daily } = usageBreakdown(rows, daysOf(period, now));
  return {
    plan,
    period: period.start.toISOString().slice(0, 7),
    closed,
    messages: {
      ...figures,
      periodStart: period.start.toISOString(),
      periodEnd: period.end.toISOString(),
      overageBilling,
      byChannel,
      byKind,
    },
    daily,
    inboundStorage: { limit: inboundQuotaBytes, used: stored.bytes, remaining: Math.max(0, inboundQuotaBytes - stored.bytes), messages: stored.messages },
  };
}
