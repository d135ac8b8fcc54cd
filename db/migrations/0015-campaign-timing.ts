import type { MigrationFn } from 'umzug';
import type { QueryInterface } from 'sequelize';

/**
 * Campaigns sent at a local time of day, and repaired when their workflow is gone (docs/campaigns.md):
 * - `workspaces.timezone`: the zone of contacts without a valid `timezone` attribute.
 * - `campaigns.send_at_local_time`: the time of day each recipient gets the campaign in their own zone.
 * - `campaign_recipients.send_after`: when that is for this recipient, fixed at the snapshot, which numbers
 *   the recipients in that order so the campaign's cursor walks them as they come due.
 */
export const up: MigrationFn<QueryInterface> = async ({ context }) => {
  await context.sequelize.query(`
    ALTER TABLE workspaces ADD COLUMN timezone text NOT NULL DEFAULT 'UTC';
    ALTER TABLE campaigns ADD COLUMN send_at_local_time time, ADD COLUMN reconcile_after timestamptz;
    ALTER TABLE campaign_recipients ADD COLUMN send_after timestamptz;

    -- One expression (no FROM), so the planner inlines it into the snapshot's million-row insert.
    CREATE FUNCTION local_send_after(start timestamptz, at time, zone text) RETURNS timestamptz
    LANGUAGE sql STABLE PARALLEL SAFE AS $$
      SELECT CASE
        WHEN (date_trunc('day', start AT TIME ZONE zone) + at) AT TIME ZONE zone >= start
          THEN (date_trunc('day', start AT TIME ZONE zone) + at) AT TIME ZONE zone
        ELSE (date_trunc('day', start AT TIME ZONE zone) + interval '1 day' + at) AT TIME ZONE zone
      END
    $$;
  `);
};

export const down: MigrationFn<QueryInterface> = async ({ context }) => {
  await context.sequelize.query(`
    DROP FUNCTION local_send_after(timestamptz, time, text);
    ALTER TABLE campaign_recipients DROP COLUMN send_after;
    ALTER TABLE campaigns DROP COLUMN send_at_local_time, DROP COLUMN reconcile_after;
    ALTER TABLE workspaces DROP COLUMN timezone;
  `);
};
