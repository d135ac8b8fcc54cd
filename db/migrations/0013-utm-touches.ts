import type { MigrationFn } from 'umzug';
import type { QueryInterface } from 'sequelize';

/**
 * UTM touches: a person's click on a tagged link of one of our messages, written with the click event in
 * the tracking batch (db/repositories/tracking-events.ts). The contact is the message's, so the touch
 * survives the message's deletion; attribution reads a contact's touches in time order, and the touch
 * list reads a workspace's newest first.
 */
export const up: MigrationFn<QueryInterface> = async ({ context }) => {
  await context.sequelize.query(`
    CREATE TABLE utm_touches (
      id uuid PRIMARY KEY,
      workspace_id uuid NOT NULL,
      contact_id uuid,
      message_id uuid REFERENCES messages (id) ON DELETE SET NULL,
      source text,
      medium text,
      campaign text,
      url text NOT NULL,
      occurred_at timestamptz NOT NULL
    );
    CREATE INDEX utm_touches_workspace_idx ON utm_touches (workspace_id, occurred_at DESC);
    CREATE INDEX utm_touches_contact_idx ON utm_touches (workspace_id, contact_id, occurred_at) WHERE contact_id IS NOT NULL;
  `);
};

export const down: MigrationFn<QueryInterface> = async ({ context }) => {
  await context.sequelize.query('DROP TABLE utm_touches');
};
