import { QueryTypes, type Sequelize, type Transaction } from 'sequelize';
import type { Channel } from '../../core/identities';
import { type Plan, periodKey, PLANS, type UsagePeriod } from '../../core/plans';
import type { UsageDay, UsageKind, UsageOf } from '../../core/usage';

export async function usedInPeriod(db: Sequelize, workspaceId: string, period: UsagePeriod): Promise<number> {
  const rows = await db.query<{ used: string }>(
    'SELECT used FROM usage_counters WHERE workspace_id = $1 AND period_start = $2',
    { bind: [workspaceId, periodKey(period)], type: QueryTypes.SELECT },
  );
  return rows[0] ? Number(rows[0].used) : 0;
}

/**
 * Where a reservation is counted in `usage_daily`: its channel and kind, on the day `at` (now when
 * absent; a journey message's own clock), kept inside the period. A release names the same, so the
 * days of a period always add up to the ledger's `used`.
 */
export interface UsageEntry extends UsageOf {
  at?: Date | null;
}

/** The day, within the period `$period`, that a reservation made at `$at` (or now) is counted on (migration 0026). */
export const USAGE_DAY = (period: string, at: string) => `usage_day(${period}::date, COALESCE(${at}::timestamptz, now()))`;

/**
 * Reserves `units` of the period's quota in one statement, counted on the day, channel and kind of `entry`.
 * The WHERE on the upsert is what keeps concurrent reservations from passing the limit: Postgres re-checks
 * it under the row lock; the day's row moves only when the reservation did. Returns the new total, or null
 * when the plan does not allow that many more.
 */
export async function reserveQuota(
  db: Sequelize,
  workspaceId: string,
  plan: Plan,
  period: UsagePeriod,
  units: number,
  entry: UsageEntry,
  transaction?: Transaction,
): Promise<number | null> {
  const limit = plan.overageBilling ? null : plan.monthlyMessages;
  if (limit !== null && units > limit) return null;
  const rows = await db.query<{ used: string }>(
    `WITH reserved AS (
       INSERT INTO usage_counters AS c (workspace_id, period_start, used) VALUES ($1, $2, $3)
       ON CONFLICT (workspace_id, period_start)
       DO UPDATE SET used = c.used + EXCLUDED.used
       WHERE $4::bigint IS NULL OR c.used + EXCLUDED.used <= $4::bigint
       RETURNING used
     ),
     daily AS (
       INSERT INTO usage_daily AS d (workspace_id, day, channel, kind, messages)
       SELECT $1, ${USAGE_DAY('$2', '$7')}, $5, $6, $3 FROM reserved WHERE $3::bigint > 0
       ON CONFLICT (workspace_id, day, channel, kind) DO UPDATE SET messages = d.messages + EXCLUDED.messages
     )
     SELECT used FROM reserved`,
    { bind: [workspaceId, periodKey(period), units, limit, entry.channel, entry.kind, entry.at ?? null], type: QueryTypes.SELECT, transaction },
  );
  return rows[0] ? Number(rows[0].used) : null;
}

/**
 * Gives units back (a reservation whose send was never accepted, recipients dropped, a campaign canceled)
 * from the period given as `YYYY-MM-DD` and from the day, channel and kind they were counted on.
 * Never goes below zero.
 */
export async function releaseQuota(
  db: Sequelize,
  workspaceId: string,
  period: string,
  units: number,
  entry: UsageEntry,
  transaction?: Transaction,
): Promise<void> {
  if (units <= 0) return;
  await db.query(
    `WITH released AS (
       UPDATE usage_counters SET used = GREATEST(0, used - $3) WHERE workspace_id = $1 AND period_start = $2
     )
     UPDATE usage_daily SET messages = GREATEST(0, messages - $3)
     WHERE workspace_id = $1 AND day = ${USAGE_DAY('$2', '$6')} AND channel = $4 AND kind = $5`,
    { bind: [workspaceId, period, units, entry.channel, entry.kind, entry.at ?? null], transaction },
  );
}

/** The period's days as counted: one row per day, channel and kind with units. */
export async function usageDays(db: Sequelize, workspaceId: string, period: UsagePeriod): Promise<UsageDay[]> {
  const rows = await db.query<{ day: string; channel: Channel; kind: UsageKind; messages: string }>(
    `SELECT to_char(day, 'YYYY-MM-DD') AS day, channel, kind, messages FROM usage_daily
     WHERE workspace_id = $1 AND day >= $2::date AND day < $3::date AND messages > 0`,
    { bind: [workspaceId, periodKey(period), period.end.toISOString().slice(0, 10)], type: QueryTypes.SELECT },
  );
  return rows.map((row) => ({ ...row, messages: Number(row.messages) }));
}

export interface UsageStatement {
  plan: string;
  limit: number;
  used: number;
  overage: number;
}

/** The statement written when the period closed, if it has. */
export async function findUsageStatement(db: Sequelize, workspaceId: string, period: UsagePeriod): Promise<UsageStatement | null> {
  const rows = await db.query<{ plan: string; message_limit: number; used: string; overage: string }>(
    'SELECT plan, message_limit, used, overage FROM usage_statements WHERE workspace_id = $1 AND period_start = $2',
    { bind: [workspaceId, periodKey(period)], type: QueryTypes.SELECT },
  );
  const row = rows[0];
  return row ? { plan: row.plan, limit: row.message_limit, used: Number(row.used), overage: Number(row.overage) } : null;
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
