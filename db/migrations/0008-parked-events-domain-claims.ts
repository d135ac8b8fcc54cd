import type { MigrationFn } from 'umzug';
import type { QueryInterface } from 'sequelize';

/**
 * Issue 10 (harden the send path): provider notifications that name a provider message id no message has
 * yet are parked instead of dropped. SES may notify before the delivery activity has recorded the id it
 * answered, and a crash between the provider's answer and `recordSent` leaves the id unrecorded until a
 * retry or the reconciler records it. The parked event is recorded on its message once the id is known.
 * The table has no workspace_id, unlike every other table: the workspace is exactly what is unknown until
 * the message is found. Nothing in it is served by the API.
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
  `);
};

export const down: MigrationFn<QueryInterface> = async ({ context }) => {
  await context.sequelize.query(`
    DROP TABLE parked_provider_events;
  `);
};
