import type { MigrationFn } from 'umzug';
import type { QueryInterface } from 'sequelize';

/**
 * Broadcast campaigns (docs/campaigns.md):
 * - `campaigns`: the draft as edited, and, frozen at send, what every message carries (`message_*`), the
 *   snapshot's size, how far the outbox has been fed (`materialized`, moved with each page) and what a
 *   cancel left unsent. `revision` moves with every edit: a confirmation token names the one it saw.
 * - `campaign_recipients`: the audience as it was when the campaign started, numbered 1..n, so the
 *   campaign pages through it with a cursor whatever happens to the contacts meanwhile. No foreign keys:
 *   a check per row would double the time a million-row snapshot takes, and the rows are only ever
 *   written by that one statement.
 * - `campaign_message_id(campaign, contact)`: the message id of a recipient, name-based (SHA-256, UUID
 *   version 8), so writing a page twice inserts nothing twice.
 * - `campaign_counters`: the figures of CampaignMetricsSummary, moved by a trigger on message_events
 *   whoever inserts the event (sends, provider notifications, tracking, unsubscribes), in 16 rows per
 *   campaign (`shard`, the inserting connection's), so 500 sends a second do not queue on one row.
 *   Reads sum the shards. `campaign_engagements` holds one row per message and kind of first human
 *   engagement: its primary key is what makes a unique open or click count once under concurrency.
 * - `messages_campaign_unfinished_idx`: a campaign's messages not yet sent, which the campaign counts to
 *   keep a bounded window in the outbox. Small, since sent messages leave it.
 */
export const up: MigrationFn<QueryInterface> = async ({ context }) => {
  await context.sequelize.query(`
    CREATE TABLE campaigns (
      id uuid PRIMARY KEY,
      workspace_id uuid NOT NULL REFERENCES workspaces (id) ON DELETE CASCADE,
      name text NOT NULL,
      status text NOT NULL DEFAULT 'draft'
        CHECK (status IN ('draft', 'scheduled', 'sending', 'paused', 'sent', 'canceled', 'failed')),
      list_id uuid,
      segment_id uuid,
      from_address text,
      subject text,
      html text,
      text text,
      template_id uuid,
      reply_to text[] NOT NULL DEFAULT '{}',
      attachments jsonb NOT NULL DEFAULT '[]',
      disable_tracking boolean NOT NULL DEFAULT false,
      disable_utm boolean NOT NULL DEFAULT false,
      revision integer NOT NULL DEFAULT 1,
      scheduled_at timestamptz,
      message_from text,
      message_subject text,
      message_content jsonb,
      recipient_count integer,
      materialized integer NOT NULL DEFAULT 0,
      canceled_count integer NOT NULL DEFAULT 0,
      quota_period date,
      paused_reason text,
      auto_paused_at timestamptz,
      failure_reason text,
      started_at timestamptz,
      completed_at timestamptz,
      created_at timestamptz NOT NULL DEFAULT now(),
      updated_at timestamptz NOT NULL DEFAULT now(),
      CHECK (list_id IS NULL OR segment_id IS NULL)
    );
    CREATE INDEX campaigns_newest_idx ON campaigns (workspace_id, created_at DESC, id DESC);
    -- DELETE /templates/:id asks whether an unfinished campaign uses the template.
    CREATE INDEX campaigns_template_idx ON campaigns (template_id) WHERE template_id IS NOT NULL AND status NOT IN ('sent', 'canceled', 'failed');

    CREATE TABLE campaign_recipients (
      campaign_id uuid NOT NULL,
      position integer NOT NULL,
      workspace_id uuid NOT NULL,
      contact_id uuid NOT NULL,
      address text NOT NULL,
      PRIMARY KEY (campaign_id, position)
    );

    CREATE FUNCTION campaign_message_id(campaign uuid, contact uuid) RETURNS uuid
    LANGUAGE sql IMMUTABLE PARALLEL SAFE AS $$
      SELECT encode(set_byte(set_byte(h, 6, (get_byte(h, 6) & 15) | 128), 8, (get_byte(h, 8) & 63) | 128), 'hex')::uuid
      FROM (SELECT substring(sha256('campaign-message:'::bytea || uuid_send(campaign) || uuid_send(contact)) FROM 1 FOR 16) AS h) hashed
    $$;

    CREATE INDEX messages_campaign_unfinished_idx ON messages (campaign_id)
      WHERE campaign_id IS NOT NULL AND status IN ('queued', 'sending');

    CREATE TABLE campaign_counters (
      campaign_id uuid NOT NULL,
      shard smallint NOT NULL,
      workspace_id uuid NOT NULL,
      sent integer NOT NULL DEFAULT 0,
      delivered integer NOT NULL DEFAULT 0,
      hard_bounces integer NOT NULL DEFAULT 0,
      soft_bounces integer NOT NULL DEFAULT 0,
      complaints integer NOT NULL DEFAULT 0,
      unsubscribes integer NOT NULL DEFAULT 0,
      failed integer NOT NULL DEFAULT 0,
      opens integer NOT NULL DEFAULT 0,
      clicks integer NOT NULL DEFAULT 0,
      content_clicks integer NOT NULL DEFAULT 0,
      unique_opens integer NOT NULL DEFAULT 0,
      unique_clicks integer NOT NULL DEFAULT 0,
      PRIMARY KEY (campaign_id, shard)
    );

    CREATE TABLE campaign_engagements (
      message_id uuid NOT NULL,
      type text NOT NULL,
      campaign_id uuid NOT NULL,
      workspace_id uuid NOT NULL,
      PRIMARY KEY (message_id, type)
    );

    -- Statement-level, so a batch of events (a group-committed send record, a tracking flush) costs one
    -- counter update per campaign. Only human opens and clicks count; content clicks leave out the logo,
    -- images, header and footer chrome and social links (a link without a role counts as content).
    CREATE FUNCTION count_campaign_events() RETURNS trigger LANGUAGE plpgsql AS $$
    BEGIN
      WITH events AS (
        SELECT m.workspace_id, m.campaign_id, e.message_id, e.type, e.classification, e.bounce_type, e.link_role
        FROM new_events e JOIN messages m ON m.id = e.message_id
        WHERE m.campaign_id IS NOT NULL
      ),
      firsts AS (
        INSERT INTO campaign_engagements (message_id, type, campaign_id, workspace_id)
        SELECT DISTINCT message_id, type, campaign_id, workspace_id FROM events
        WHERE type IN ('open', 'click') AND classification = 'human'
        ORDER BY message_id, type
        ON CONFLICT DO NOTHING
        RETURNING campaign_id, type
      ),
      uniques AS (
        SELECT campaign_id, count(*) FILTER (WHERE type = 'open') AS opens, count(*) FILTER (WHERE type = 'click') AS clicks
        FROM firsts GROUP BY campaign_id
      ),
      counted AS (
        SELECT workspace_id, campaign_id,
          count(*) FILTER (WHERE type = 'sent') AS sent,
          count(*) FILTER (WHERE type = 'delivered') AS delivered,
          count(*) FILTER (WHERE type = 'bounce' AND bounce_type = 'hard') AS hard_bounces,
          count(*) FILTER (WHERE type = 'bounce' AND bounce_type IS DISTINCT FROM 'hard') AS soft_bounces,
          count(*) FILTER (WHERE type = 'complaint') AS complaints,
          count(*) FILTER (WHERE type = 'unsubscribe') AS unsubscribes,
          count(*) FILTER (WHERE type = 'failed') AS failed,
          count(*) FILTER (WHERE type = 'open' AND classification = 'human') AS opens,
          count(*) FILTER (WHERE type = 'click' AND classification = 'human') AS clicks,
          count(*) FILTER (WHERE type = 'click' AND classification = 'human'
            AND (link_role IS NULL OR link_role NOT IN ('logo', 'image', 'chrome', 'social'))) AS content_clicks
        FROM events GROUP BY workspace_id, campaign_id
      )
      INSERT INTO campaign_counters AS c (campaign_id, shard, workspace_id, sent, delivered, hard_bounces, soft_bounces,
        complaints, unsubscribes, failed, opens, clicks, content_clicks, unique_opens, unique_clicks)
      SELECT counted.campaign_id, pg_backend_pid() % 16, counted.workspace_id, counted.sent, counted.delivered,
        counted.hard_bounces, counted.soft_bounces, counted.complaints, counted.unsubscribes, counted.failed,
        counted.opens, counted.clicks, counted.content_clicks, COALESCE(uniques.opens, 0), COALESCE(uniques.clicks, 0)
      FROM counted LEFT JOIN uniques ON uniques.campaign_id = counted.campaign_id
      -- Rows locked in one order, so two statements touching the same campaigns cannot deadlock.
      ORDER BY counted.campaign_id
      ON CONFLICT (campaign_id, shard) DO UPDATE SET
        sent = c.sent + EXCLUDED.sent,
        delivered = c.delivered + EXCLUDED.delivered,
        hard_bounces = c.hard_bounces + EXCLUDED.hard_bounces,
        soft_bounces = c.soft_bounces + EXCLUDED.soft_bounces,
        complaints = c.complaints + EXCLUDED.complaints,
        unsubscribes = c.unsubscribes + EXCLUDED.unsubscribes,
        failed = c.failed + EXCLUDED.failed,
        opens = c.opens + EXCLUDED.opens,
        clicks = c.clicks + EXCLUDED.clicks,
        content_clicks = c.content_clicks + EXCLUDED.content_clicks,
        unique_opens = c.unique_opens + EXCLUDED.unique_opens,
        unique_clicks = c.unique_clicks + EXCLUDED.unique_clicks;
      RETURN NULL;
    END $$;
    CREATE TRIGGER message_events_count_campaigns AFTER INSERT ON message_events
      REFERENCING NEW TABLE AS new_events FOR EACH STATEMENT EXECUTE FUNCTION count_campaign_events();
  `);
};

export const down: MigrationFn<QueryInterface> = async ({ context }) => {
  await context.sequelize.query(`
    DROP TRIGGER message_events_count_campaigns ON message_events;
    DROP FUNCTION count_campaign_events();
    DROP TABLE campaign_engagements;
    DROP TABLE campaign_counters;
    DROP INDEX messages_campaign_unfinished_idx;
    DROP FUNCTION campaign_message_id(uuid, uuid);
    DROP TABLE campaign_recipients;
    DROP TABLE campaigns;
  `);
};
