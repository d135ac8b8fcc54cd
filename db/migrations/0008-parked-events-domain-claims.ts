import type { MigrationFn } from 'umzug';
import type { QueryInterface } from 'sequelize';

/**
 * Two changes of issue 10 (harden the send path):
 *
 * 1. Provider notifications that name a provider message id no message has yet are parked instead of
 *    dropped. SES may notify before the delivery activity has recorded the id it answered, and a crash
 *    between the provider's answer and `recordSent` leaves the id unrecorded until a retry or the
 *    reconciler records it. The parked event is recorded on its message once the id is known.
 *    The table has no workspace_id, unlike every other table: the workspace is exactly what is unknown
 *    until the message is found. Nothing in it is served by the API.
 *
 * 2. A domain name is unique among verified domains only. Before, the first workspace to add a name held it
 *    whatever its status, so a pending claim that was never verified blocked the real owner forever. Now
 *    several workspaces may hold pending claims; the first to verify wins, and this partial index settles
 *    two verifications racing for the same name. One workspace still holds a name once.
 */
export const up: MigrationFn<QueryInterface> = async ({ context }) => {
  await context.sequelize.query(`
    CREATE TABLE parked_provider_events (
      provider text NOT NULL,
      -- The provider's id of the notification (SNS MessageId): a redelivery is parked, and recorded, once.
      notification_id text NOT NULL,
      provider_message_id text NOT NULL,
      -- The parsed event (core/ses-events.ts ProviderEvent), as it will be recorded.
      event jsonb NOT NULL,
      received_at timestamptz NOT NULL DEFAULT now(),
      PRIMARY KEY (provider, notification_id)
    );
    CREATE INDEX parked_provider_events_message_idx ON parked_provider_events (provider, provider_message_id);
    CREATE INDEX parked_provider_events_received_idx ON parked_provider_events (received_at);

    DROP INDEX domains_name_key;
    CREATE UNIQUE INDEX domains_workspace_name_key ON domains (workspace_id, name);
    CREATE UNIQUE INDEX domains_verified_name_key ON domains (name) WHERE status = 'verified';
    -- Lookups by name across workspaces (claims, the local DNS server) no longer have a unique index to use.
    CREATE INDEX domains_name_idx ON domains (name);
  `);
};

export const down: MigrationFn<QueryInterface> = async ({ context }) => {
  // Fails when several workspaces claim one name: which claim to keep is a decision, not a migration.
  await context.sequelize.query(`
    DROP INDEX domains_name_idx;
    DROP INDEX domains_verified_name_key;
    DROP INDEX domains_workspace_name_key;
    CREATE UNIQUE INDEX domains_name_key ON domains (name);
    DROP TABLE parked_provider_events;
  `);
};
