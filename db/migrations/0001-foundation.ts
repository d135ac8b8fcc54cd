import type { MigrationFn } from 'umzug';
import type { QueryInterface } from 'sequelize';

export const up: MigrationFn<QueryInterface> = async ({ context }) => {
  await context.sequelize.query(`
    CREATE TABLE workspaces (
      id uuid PRIMARY KEY,
      name text NOT NULL,
      plan text NOT NULL,
      created_at timestamptz NOT NULL DEFAULT now()
    );

    CREATE TABLE api_keys (
      id uuid PRIMARY KEY,
      workspace_id uuid NOT NULL REFERENCES workspaces (id) ON DELETE CASCADE,
      name text,
      -- Only the SHA-256 of the key is kept; the unique index is also the lookup path of every request.
      key_hash text NOT NULL UNIQUE,
      display_prefix text NOT NULL,
      -- '*' stands for full access, so such a key also holds scopes added in later versions.
      scopes text[] NOT NULL,
      created_at timestamptz NOT NULL DEFAULT now(),
      revoked_at timestamptz
    );
    CREATE INDEX api_keys_workspace_idx ON api_keys (workspace_id, created_at DESC);

    -- The quota ledger: one row per workspace and calendar month, moved by a single conditional upsert
    -- so that concurrent sends can never reserve past the plan.
    CREATE TABLE usage_counters (
      workspace_id uuid NOT NULL REFERENCES workspaces (id) ON DELETE CASCADE,
      period_start date NOT NULL,
      used bigint NOT NULL DEFAULT 0 CHECK (used >= 0),
      PRIMARY KEY (workspace_id, period_start)
    );

    -- Closed months, written once by the usage rollup workflow: what billing reads for overage.
    CREATE TABLE usage_statements (
      workspace_id uuid NOT NULL REFERENCES workspaces (id) ON DELETE CASCADE,
      period_start date NOT NULL,
      period_end date NOT NULL,
      plan text NOT NULL,
      message_limit integer NOT NULL,
      used bigint NOT NULL,
      overage bigint NOT NULL,
      closed_at timestamptz NOT NULL DEFAULT now(),
      PRIMARY KEY (workspace_id, period_start)
    );
  `);
};

export const down: MigrationFn<QueryInterface> = async ({ context }) => {
  await context.sequelize.query(`
    DROP TABLE usage_statements;
    DROP TABLE usage_counters;
    DROP TABLE api_keys;
    DROP TABLE workspaces;
  `);
};
