import type { MigrationFn } from 'umzug';
import type { QueryInterface } from 'sequelize';

/**
 * Mail sent from an inbox follows its message (issue 16).
 *
 * - `inbox_messages_message_idx`: the out row of a messages row, found by every event of that message.
 * - `inbox_messages_follow_events`: when a message's `sent`, `delivered`, `bounce` or `failed` event is stored,
 *   its inbox row moves to that status and the inbox's daily `delivered`/`bounced` counter moves, in the
 *   statement that stored the event (so a counter never disagrees with the events, and a redelivered provider
 *   notification, stored once by its provider event id, counts once). Statuses only move forward
 *   (queued → sent → delivered → bounced/failed), and a counter moves only on the transition into its
 *   status, so each counts once per message however many events repeat it. On `sent` the row also takes the
 *   provider's bare message id: SES rewrites our Message-ID to `<providerId@region.amazonses.com>`, and the
 *   inbound threading finds replies quoting that form by it.
 */
export const up: MigrationFn<QueryInterface> = async ({ context }) => {
  await context.sequelize.query(`
    CREATE INDEX inbox_messages_message_idx ON inbox_messages (message_id) WHERE message_id IS NOT NULL;

    CREATE FUNCTION inbox_status_rank(status text) RETURNS integer LANGUAGE sql IMMUTABLE AS $$
      SELECT CASE status WHEN 'queued' THEN 0 WHEN 'sent' THEN 1 WHEN 'delivered' THEN 2 WHEN 'bounced' THEN 3 WHEN 'failed' THEN 3 ELSE -1 END
    $$;

    CREATE FUNCTION inbox_messages_follow_events() RETURNS trigger LANGUAGE plpgsql AS $$
    BEGIN
      WITH outcome AS (
        -- The furthest status each message's new events reach (several may arrive in one statement).
        SELECT DISTINCT ON (e.message_id) e.message_id,
          CASE e.type WHEN 'bounce' THEN 'bounced' ELSE e.type END AS status
        FROM stored_events e
        WHERE e.type IN ('sent', 'delivered', 'bounce', 'failed')
        ORDER BY e.message_id, inbox_status_rank(CASE e.type WHEN 'bounce' THEN 'bounced' ELSE e.type END) DESC
      ),
      moved AS (
        UPDATE inbox_messages im
           SET status = o.status,
               provider_message_id = COALESCE(im.provider_message_id, m.provider_message_id),
               updated_at = now()
          FROM outcome o JOIN messages m ON m.id = o.message_id
         WHERE im.message_id = o.message_id AND im.direction = 'out'
           AND inbox_status_rank(o.status) > inbox_status_rank(im.status)
        RETURNING im.workspace_id, im.inbox_id, im.status
      ),
      counted AS (
        SELECT workspace_id, inbox_id,
          count(*) FILTER (WHERE status = 'delivered') AS delivered,
          count(*) FILTER (WHERE status = 'bounced') AS bounced
        FROM moved GROUP BY workspace_id, inbox_id
      )
      INSERT INTO inbox_daily_counters AS c (workspace_id, inbox_id, day, delivered, bounced)
      SELECT workspace_id, inbox_id, (now() AT TIME ZONE 'UTC')::date, delivered, bounced
      FROM counted WHERE delivered > 0 OR bounced > 0
      -- Rows locked in one order, so two statements touching the same inboxes cannot deadlock.
      ORDER BY inbox_id
      ON CONFLICT (inbox_id, day) DO UPDATE SET delivered = c.delivered + EXCLUDED.delivered, bounced = c.bounced + EXCLUDED.bounced;
      RETURN NULL;
    END $$;

    CREATE TRIGGER message_events_follow_inboxes AFTER INSERT ON message_events
      REFERENCING NEW TABLE AS stored_events FOR EACH STATEMENT EXECUTE FUNCTION inbox_messages_follow_events();
  `);
};

export const down: MigrationFn<QueryInterface> = async ({ context }) => {
  await context.sequelize.query(`
    DROP TRIGGER message_events_follow_inboxes ON message_events;
    DROP FUNCTION inbox_messages_follow_events();
    DROP FUNCTION inbox_status_rank(text);
    DROP INDEX inbox_messages_message_idx;
  `);
};
