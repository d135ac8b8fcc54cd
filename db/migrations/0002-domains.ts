import type { MigrationFn } from 'umzug';
import type { QueryInterface } from 'sequelize';

export const up: MigrationFn<QueryInterface> = async ({ context }) => {
  await context.sequelize.query(`
    CREATE TABLE domains (
      id uuid PRIMARY KEY,
      workspace_id uuid NOT NULL REFERENCES workspaces (id) ON DELETE CASCADE,
      -- Lower-case A-labels, no trailing dot: the one form every lookup and comparison uses.
      name text NOT NULL,
      status text NOT NULL DEFAULT 'pending' CHECK (status IN ('pending', 'verified', 'failed')),
      region text NOT NULL,
      dkim_selector text NOT NULL,
      -- base64 DER SubjectPublicKeyInfo, exactly as published in p=.
      dkim_public_key text NOT NULL,
      -- PKCS#8 PEM sealed with MASTER_KEY (core/secrets.ts); never returned by the API.
      dkim_private_key_sealed text NOT NULL,
      inbound_enabled boolean NOT NULL DEFAULT false,
      default_from_name text,
      default_from_address text,
      -- The last check: its customer-facing explanation and each record's own status.
      detail text,
      record_checks jsonb NOT NULL DEFAULT '[]',
      last_checked_at timestamptz,
      verified_at timestamptz,
      created_at timestamptz NOT NULL DEFAULT now(),
      updated_at timestamptz NOT NULL DEFAULT now()
    );
    -- A domain belongs to one workspace across the platform: a second claim, from any workspace, ends here.
    CREATE UNIQUE INDEX domains_name_key ON domains (name);
    CREATE INDEX domains_workspace_idx ON domains (workspace_id, created_at DESC);
    -- The watchdog looks for domains whose background verification never ran or stopped.
    CREATE INDEX domains_last_checked_idx ON domains (last_checked_at NULLS FIRST);

    -- Platform events (domain.verified, domain.failed, ...) written in the same transaction as the change
    -- they describe; the webhooks issue delivers them.
    CREATE TABLE platform_events (
      id uuid PRIMARY KEY,
      workspace_id uuid NOT NULL REFERENCES workspaces (id) ON DELETE CASCADE,
      type text NOT NULL,
      data jsonb NOT NULL,
      created_at timestamptz NOT NULL DEFAULT now()
    );
    CREATE INDEX platform_events_workspace_idx ON platform_events (workspace_id, created_at);
  `);
};

export const down: MigrationFn<QueryInterface> = async ({ context }) => {
  await context.sequelize.query(`
    DROP TABLE platform_events;
    DROP TABLE domains;
  `);
};
