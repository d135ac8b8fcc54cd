import type { MigrationFn } from 'umzug';
import type { QueryInterface } from 'sequelize';

/**
 * Parts of a message already sent (docs/messages.md). A Telegram message with attachments is several Bot
 * API messages (the text, then each file), and the Bot API has no idempotency key: when a later part is
 * throttled (429) and the attempt is retried, the parts recorded here are not sent again. A part is
 * recorded right after Telegram answers it, under the message's delivery claim (migration 0009), so two
 * attempts never send the same part concurrently.
 */
export const up: MigrationFn<QueryInterface> = async ({ context }) => {
  await context.sequelize.query(`
    CREATE TABLE message_parts (
      message_id uuid NOT NULL REFERENCES messages (id) ON DELETE CASCADE,
      workspace_id uuid NOT NULL,
      part smallint NOT NULL,
      provider_part_id text NOT NULL,
      sent_at timestamptz NOT NULL DEFAULT now(),
      PRIMARY KEY (message_id, part)
    );
  `);
};

export const down: MigrationFn<QueryInterface> = async ({ context }) => {
  await context.sequelize.query('DROP TABLE message_parts;');
};
