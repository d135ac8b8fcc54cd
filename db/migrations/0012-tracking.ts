import type { MigrationFn } from 'umzug';
import type { QueryInterface } from 'sequelize';

/**
 * Open and click tracking (docs/tracking.md):
 * - `message_links`: each tracked message's link table, written with its rendered content. A click
 *   token names a row of it by position; the redirect goes to the stored `target` and nowhere else.
 *   `link_id` is unique per message, so click events (which carry it) join back to their link.
 * - `messages.clicked_links`: the distinct links a person clicked (MessageEngagement.links), moved with
 *   the engagement counters, so reading a message or a list never scans its events.
 * - `message_events_clicks_idx`: the per-link statistics of a workspace over a period read clicks only.
 */
export const up: MigrationFn<QueryInterface> = async ({ context }) => {
  await context.sequelize.query(`
    CREATE TABLE message_links (
      message_id uuid NOT NULL REFERENCES messages (id) ON DELETE CASCADE,
      position smallint NOT NULL,
      workspace_id uuid NOT NULL,
      link_id text NOT NULL,
      url text NOT NULL,
      target text NOT NULL,
      canonical_url text NOT NULL,
      role text,
      honeypot boolean NOT NULL DEFAULT false,
      PRIMARY KEY (message_id, position),
      UNIQUE (message_id, link_id)
    );
    ALTER TABLE messages ADD COLUMN clicked_links text[] NOT NULL DEFAULT '{}';
    CREATE INDEX message_events_clicks_idx ON message_events (workspace_id, created_at) WHERE type = 'click';
  `);
};

export const down: MigrationFn<QueryInterface> = async ({ context }) => {
  await context.sequelize.query(`
    DROP INDEX message_events_clicks_idx;
    ALTER TABLE messages DROP COLUMN clicked_links;
    DROP TABLE message_links;
  `);
};
