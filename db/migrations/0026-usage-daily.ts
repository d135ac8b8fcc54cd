import type { MigrationFn } from 'umzug';
import type { QueryInterface } from 'sequelize';

/**
 * Usage by day, channel and kind (issue 18), beside the quota ledger (`usage_counters`, one row a month).
 *
 * - `usage_daily` is moved in the same statement or transaction as every reservation and release of the
 *   ledger, by the same units, so the days of a period always add up to the period's `used`. `kind` is the
 *   message's kind, except that mail sent from an agent inbox counts as `inbox`.
 * - `usage_day(period, at)`: the day a reservation (or its release) is counted on, kept inside its period, so
 *   a reservation made at 23:59:59 on the last of the month for that month never lands on the next one's first day.
 * - The backfill rebuilds the days of earlier sends from the messages (their net `quota_units`, on the
 *   day they were accepted; a campaign's on the day its send started; failed and canceled ones gave theirs
 *   back) and the campaign recipients not yet written to the outbox. Units the ledger holds that no message
 *   explains (set by hand) stay unattributed.
 */
export const up: MigrationFn<QueryInterface> = async ({ context }) => {
  await context.sequelize.query(`
    CREATE TABLE usage_daily (
      workspace_id uuid NOT NULL REFERENCES workspaces (id) ON DELETE CASCADE,
      day date NOT NULL,
      channel text NOT NULL,
      kind text NOT NULL,
      messages bigint NOT NULL DEFAULT 0 CHECK (messages >= 0),
      PRIMARY KEY (workspace_id, day, channel, kind)
    );

    CREATE FUNCTION usage_day(period date, at timestamptz) RETURNS date LANGUAGE sql STABLE AS $$
      SELECT LEAST(GREATEST((at AT TIME ZONE 'UTC')::date, period), (period + interval '1 month' - interval '1 day')::date)
    $$;

    INSERT INTO usage_daily (workspace_id, day, channel, kind, messages)
    SELECT workspace_id, day, channel, kind, sum(units)
    FROM (
      SELECT m.workspace_id, usage_day(m.quota_period, COALESCE(c.started_at, m.created_at)) AS day, m.channel,
             CASE WHEN EXISTS (SELECT 1 FROM inbox_messages i WHERE i.message_id = m.id) THEN 'inbox' ELSE m.kind END AS kind,
             m.quota_units AS units
      FROM messages m LEFT JOIN campaigns c ON c.id = m.campaign_id
      WHERE m.status NOT IN ('failed', 'canceled') AND m.quota_units > 0
      UNION ALL
      SELECT workspace_id, usage_day(quota_period, started_at), 'email', 'campaign', recipient_count - materialized
      FROM campaigns
      WHERE quota_period IS NOT NULL AND started_at IS NOT NULL AND recipient_count > materialized AND status IN ('sending', 'paused')
    ) AS sent
    GROUP BY workspace_id, day, channel, kind;
  `);
};

export const down: MigrationFn<QueryInterface> = async ({ context }) => {
  await context.sequelize.query(`
    DROP FUNCTION usage_day(date, timestamptz);
    DROP TABLE usage_daily;
  `);
};
