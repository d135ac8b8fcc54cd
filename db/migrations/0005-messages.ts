import type { MigrationFn } from 'umzug';
import type { QueryInterface } from 'sequelize';

export const up: MigrationFn<QueryInterface> = async ({ context }) => {
  await context.sequelize.query(`
    CREATE TABLE messages (
      id uuid PRIMARY KEY,
      workspace_id uuid NOT NULL REFERENCES workspaces (id) ON DELETE CASCADE,
      kind text NOT NULL CHECK (kind IN ('transactional', 'campaign', 'automation')),
      channel text NOT NULL,
      status text NOT NULL,
      -- One accepted send per workspace and key, forever: the unique index settles concurrent repeats.
      idempotency_key text NOT NULL,
      -- SHA-256 of the accepted request, so a repeat with another body can be flagged (bodyMismatch).
      request_hash text NOT NULL,
      from_address text,
      to_addresses text[] NOT NULL DEFAULT '{}',
      cc_addresses text[] NOT NULL DEFAULT '{}',
      bcc_addresses text[] NOT NULL DEFAULT '{}',
      subject text,
      -- What the send workflow renders from: content or template reference, variables, attachment refs.
      content jsonb NOT NULL,
      -- What it rendered (subject, html, text, headers), so delivery and retries send the same bytes.
      rendered jsonb,
      template_id uuid,
      template_version_id uuid,
      campaign_id uuid,
      enrollment_id uuid,
      contact_id uuid,
      quota_units integer NOT NULL,
      quota_period date NOT NULL,
      dropped_recipients jsonb NOT NULL DEFAULT '[]',
      provider text,
      provider_message_id text,
      -- Engagement, moved in the same transaction as the event that changes it (never recomputed on read).
      opens_human integer NOT NULL DEFAULT 0,
      opens_machine integer NOT NULL DEFAULT 0,
      clicks integer NOT NULL DEFAULT 0,
      content_clicks integer NOT NULL DEFAULT 0,
      last_link_url text,
      last_link_role text,
      unsubscribed boolean NOT NULL DEFAULT false,
      bounced boolean NOT NULL DEFAULT false,
      last_event_at timestamptz,
      created_at timestamptz NOT NULL DEFAULT now(),
      updated_at timestamptz NOT NULL DEFAULT now(),
      -- Set once the send workflow is known to be started; rows without it are the outbox.
      dispatched_at timestamptz,
      UNIQUE (workspace_id, idempotency_key)
    );
    CREATE INDEX messages_recent_idx ON messages (workspace_id, created_at DESC, id DESC);
    CREATE INDEX messages_campaign_idx ON messages (workspace_id, campaign_id) WHERE campaign_id IS NOT NULL;
    CREATE INDEX messages_contact_idx ON messages (workspace_id, contact_id) WHERE contact_id IS NOT NULL;
    CREATE INDEX messages_outbox_idx ON messages (created_at) WHERE dispatched_at IS NULL;
    -- Provider callbacks (SES over SNS) name the provider's id, not ours.
    CREATE INDEX messages_provider_idx ON messages (provider, provider_message_id) WHERE provider_message_id IS NOT NULL;

    CREATE TABLE message_events (
      id uuid PRIMARY KEY,
      workspace_id uuid NOT NULL,
      message_id uuid NOT NULL REFERENCES messages (id) ON DELETE CASCADE,
      type text NOT NULL,
      classification text,
      -- Which rule classified the event, so the decision can be explained.
      reason text,
      bounce_type text,
      link_url text,
      link_id text,
      link_role text,
      -- The provider's own id of the notification: a redelivered callback is stored once.
      provider_event_id text,
      data jsonb NOT NULL DEFAULT '{}',
      created_at timestamptz NOT NULL DEFAULT now(),
      UNIQUE (message_id, provider_event_id)
    );
    CREATE INDEX message_events_timeline_idx ON message_events (message_id, created_at);
  `);
};

export const down: MigrationFn<QueryInterface> = async ({ context }) => {
  await context.sequelize.query('DROP TABLE message_events; DROP TABLE messages;');
};
