import { AppError } from './errors';

/**
 * Plans are configuration (decisions): a monthly message quota, one unit per recipient, and whether
 * usage past the quota is billed as overage instead of refused.
 */
export const PLAN_NAMES = ['free', 'starter', 'pro'] as const;
export type PlanName = (typeof PLAN_NAMES)[number];

export interface Plan {
  name: PlanName;
  monthlyMessages: number;
  overageBilling: boolean;
  /**
   * The workspace's share of delivery when several have messages waiting: the dispatcher hands each
   * workspace slots in proportion to this (weighted round robin), so no one's backlog starves another.
   */
  dispatchWeight: number;
}

export const PLANS: Readonly<Record<PlanName, Plan>> = {
  free: { name: 'free', monthlyMessages: 3_000, overageBilling: false, dispatchWeight: 1 },
  starter: { name: 'starter', monthlyMessages: 50_000, overageBilling: false, dispatchWeight: 2 },
  pro: { name: 'pro', monthlyMessages: 500_000, overageBilling: true, dispatchWeight: 4 },
};

export function isPlanName(value: string): value is PlanName {
  return (PLAN_NAMES as readonly string[]).includes(value);
}

/** The usage period is the calendar month in UTC that contains `at`: [start, end). */
export interface UsagePeriod {
  start: Date;
  end: Date;
}

export function usagePeriodAt(at: Date): UsagePeriod {
  const start = new Date(Date.UTC(at.getUTCFullYear(), at.getUTCMonth(), 1));
  const end = new Date(Date.UTC(at.getUTCFullYear(), at.getUTCMonth() + 1, 1));
  return { start, end };
}

/** The period's key as stored: its first day, `YYYY-MM-DD`. */
export function periodKey(period: UsagePeriod): string {
  return period.start.toISOString().slice(0, 10);
}

export interface QuotaFigures {
  limit: number;
  used: number;
  remaining: number;
  overage: number;
}

export function quotaFigures(plan: Plan, used: number): QuotaFigures {
  const limit = plan.monthlyMessages;
  return {
    limit,
    used,
    remaining: Math.max(0, limit - used),
    overage: Math.max(0, used - limit),
  };
}

/** Whether `units` more may be reserved when `used` are already taken this period. */
export function quotaAllows(plan: Plan, used: number, units: number): boolean {
  return plan.overageBilling || used + units <= plan.monthlyMessages;
}

/**
 * The answer of every send the plan's quota refuses (402): the spec's body `{ error: quota_exceeded, message,
 * resource, limit, used, remaining, plan }` with the period's figures as they are now. Built here only, so
 * the single send, each batch item, chat messages, inbox mail and campaigns answer alike.
 */
export function quotaExceeded(plan: Plan, used: number, needed: number, what = 'This send'): AppError {
  const figures = quotaFigures(plan, used);
  return new AppError('quota_exceeded', `${what} needs ${needed} messages; ${figures.remaining} remain this month`, {
    resource: 'messages',
    limit: figures.limit,
    used: figures.used,
    remaining: figures.remaining,
    plan: plan.name,
  });
}
