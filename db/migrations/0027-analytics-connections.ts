import type { MigrationFn } from 'umzug';
import type { QueryInterface } from 'sequelize';

/**
 * The analytics connector (issue 18; docs/analytics.md).
 *
 * `analytics_connections`: a workspace's analytics product, at most one. Today only Matomo: its base URL,
 * site id and `token_auth` (sealed with MASTER_KEY, never shown again), the default currency of its
 * revenue, and names given to its goal ids. `sync_cursor` is the last action time of the latest visit a
 * sync has recorded, committed with each page's conversions, so the next sync starts there (an hour
 * before it, to catch conversions a visit gained after it was read). The last sync's status, count and
 * error are kept for GET /integrations/analytics.
 */
export const up: MigrationFn<QueryInterface> = async ({ context }) => {
  await context.sequelize.query(`
    CREATE TABLE analytics_connections (
      workspace_id uuid PRIMARY KEY REFERENCES workspaces (id) ON DELETE CASCADE,
      provider text NOT NULL CHECK (provider IN ('matomo')),
      base_url text NOT NULL,
      site_id integer NOT NULL CHECK (site_id > 0),
      token_sealed text NOT NULL,
      currency char(3),
      goal_names jsonb NOT NULL DEFAULT '{}',
      sync_cursor timestamptz,
      last_sync_status text CHECK (last_sync_status IN ('running', 'succeeded', 'failed')),
      last_sync_started_at timestamptz,
      last_sync_finished_at timestamptz,
      last_sync_imported integer NOT NULL DEFAULT 0,
      last_sync_error text,
      created_at timestamptz NOT NULL DEFAULT now(),
      updated_at timestamptz NOT NULL DEFAULT now()
    );
  `);
};

export const down: MigrationFn<QueryInterface> = async ({ context }) => {
  await context.sequelize.query('DROP TABLE analytics_connections;');
};
