import { QueryTypes, type Sequelize, type Transaction } from 'sequelize';
import { type Plan, periodKey, PLANS, type UsagePeriod } from '../../core/plans';

export async function usedInPeriod(db: Sequelize, workspaceId: string, period: UsagePeriod): Promise<number> {
  const rows = await db.query<{ used: string }>(
    'SELECT used FROM usage_counters WHERE workspace_id = $1 AND period_start = $2',
    { bind: [workspaceId, periodKey(period)], type: QueryTypes.SELECT },
  );
  return rows[0] ? Number(rows[0].used) : 0;
}

/**
 * Reserves `units` of the period's quota in one statement. The WHERE on the upsert is what keeps
 * concurrent reservations from passing the limit: Postgres re-checks it under the row lock. Returns
 * the new total, or null when the plan does not allow that many more.
 */
export async function reserveQuota(
  db: Sequelize,
  workspaceId: string,
  plan: Plan,
  period: UsagePeriod,
  units: number,
  transaction?: Transaction,
): Promise<number | null> {
  const limit = plan.overageBilling ? null : plan.monthlyMessages;
  if (limit !== null && units > limit) return null;
  const rows = await db.query<{ used: string }>(
    `INSERT INTO usage_counters AS c (workspace_id, period_start, used) VALUES ($1, $2, $3)
     ON CONFLICT (workspace_id, period_start)
     DO UPDATE SET used = c.used + EXCLUDED.used
     WHERE $4::bigint IS NULL OR c.used + EXCLUDED.used <= $4::bigint
     RETURNING used`,
    { bind: [workspaceId, periodKey(period), units, limit], type: QueryTypes.SELECT, transaction },
  );
  return rows[0] ? Number(rows[0].used) : null;
}

/** Gives units back (a reservation whose send was never accepted). Never goes below zero. */
export async function releaseQuota(
  db: Sequelize,
  workspaceId: string,
  period: UsagePeriod,
  units: number,
  transaction?: Transaction,
): Promise<void> {
  await db.query(
    `UPDATE usage_counters SET used = GREATEST(0, used - $3) WHERE workspace_id = $1 AND period_start = $2`,
    { bind: [workspaceId, periodKey(period), units], transaction },
  );
}

/**
 * Writes the statement of every workspace that used the closed period, with the plan it is on now.
 * Idempotent: a retried or repeated close leaves the first statement as it was.
 */
export async function closeUsagePeriod(db: Sequelize, period: UsagePeriod): Promise<number> {
  const plans = Object.values(PLANS);
  const closed = await db.query<{ workspace_id: string }>(
    `INSERT INTO usage_statements (workspace_id, period_start, period_end, plan, message_limit, used, overage)
     SELECT c.workspace_id, c.period_start, $2::date, w.plan, p.message_limit, c.used,
            CASE WHEN p.overage_billing THEN GREATEST(0, c.used - p.message_limit) ELSE 0 END
     FROM usage_counters c
     JOIN workspaces w ON w.id = c.workspace_id
     JOIN unnest($3::text[], $4::int[], $5::bool[]) AS p (name, message_limit, overage_billing) ON p.name = w.plan
     WHERE c.period_start = $1::date
     ON CONFLICT (workspace_id, period_start) DO NOTHING
     RETURNING workspace_id`,
    {
      type: QueryTypes.SELECT,
      bind: [
        periodKey(period),
        period.end.toISOString().slice(0, 10),
        plans.map((plan) => plan.name),
        plans.map((plan) => plan.monthlyMessages),
        plans.map((plan) => plan.overageBilling),
      ],
    },
  );
  return closed.length;
}
