import type { MigrationFn } from 'umzug';
import type { QueryInterface } from 'sequelize';

/**
 * Conversions, commerce and attribution (issue 17; decisions.md "Commerce, conversions and attribution").
 *
 * - `utm_touches` gains what attribution reads without joining messages: whether the clicked link is content
 *   (`is_content`: never the logo, images, header/footer chrome or social links), the message's `kind`, its
 *   campaign, automation and journey node, and the link's canonical URL (the grouping key of byLink). Touches
 *   are written by the tracking flush for human clicks only, so every row is already a person's click.
 *   `utm_touches_attribution_idx` is the one probe of an order's attribution: a contact's marketing content
 *   clicks, newest first, before a moment.
 * - `commerce_settings`: the workspace's attribution window (5 days unless set, 1 to 90).
 * - `commerce_products`: the catalogue, upserted by external id.
 * - `commerce_orders`: store and API orders, one per (source, connection, external id): a repeat external id
 *   updates the same order. Money is `numeric` in the currency's major unit (the spec's `total` is a number);
 *   `refunded` is kept apart and never subtracted. The attribution (message, campaign or automation, and the
 *   touch that earned it) is written with the order, by the rule of the spec: the last content click of a
 *   marketing message within the window before `placed_at`. `test` orders (a store's test checkout) and
 *   cancelled ones are excluded from every report.
 * - `conversions`: every conversion, whatever its source: `event` (POST /events with `properties.value`),
 *   `order` (each order), `analytics` (the analytics sync), unique per (source, external id), so a retried
 *   event, a re-sent order or a repeated sync records it once. Values are integer cents (the spec's
 *   `valueCents`). The touch summary is computed when the conversion is recorded, from the contact's touches in
 *   the lookback window: first and last touch (their message, campaign, automation, node, UTM and URL), the
 *   number of touches, and the time from the first touch; so reports read conversions only.
 * - `campaigns.holdout_percent` and `campaign_recipients.holdout`: a random share of a campaign's audience is
 *   kept out of the send, so conversions of the two groups can be compared (lift).
 */
export const up: MigrationFn<QueryInterface> = async ({ context }) => {
  await context.sequelize.query(`
    ALTER TABLE utm_touches
      ADD COLUMN is_content boolean NOT NULL DEFAULT true,
      ADD COLUMN canonical_url text,
      ADD COLUMN kind text,
      ADD COLUMN campaign_id uuid,
      ADD COLUMN automation_id uuid,
      ADD COLUMN journey_node_id text;
    CREATE INDEX utm_touches_attribution_idx ON utm_touches (workspace_id, contact_id, occurred_at DESC)
      WHERE is_content AND kind IN ('campaign', 'automation') AND contact_id IS NOT NULL;
    CREATE INDEX utm_touches_campaign_idx ON utm_touches (campaign_id, occurred_at) WHERE campaign_id IS NOT NULL;
    CREATE INDEX utm_touches_automation_idx ON utm_touches (automation_id, occurred_at) WHERE automation_id IS NOT NULL;

    CREATE TABLE commerce_settings (
      workspace_id uuid PRIMARY KEY REFERENCES workspaces (id) ON DELETE CASCADE,
      attribution_window_days smallint NOT NULL DEFAULT 5 CHECK (attribution_window_days BETWEEN 1 AND 90),
      updated_at timestamptz NOT NULL DEFAULT now()
    );

    CREATE TABLE commerce_products (
      id uuid PRIMARY KEY,
      workspace_id uuid NOT NULL REFERENCES workspaces (id) ON DELETE CASCADE,
      external_id text NOT NULL,
      title text NOT NULL,
      description text,
      image_url text,
      price numeric(14, 4),
      currency char(3),
      url text,
      source text NOT NULL DEFAULT 'api',
      updated_at timestamptz NOT NULL DEFAULT now(),
      UNIQUE (workspace_id, external_id)
    );

    CREATE TABLE commerce_orders (
      id uuid PRIMARY KEY,
      workspace_id uuid NOT NULL REFERENCES workspaces (id) ON DELETE CASCADE,
      source text NOT NULL CHECK (source IN ('store', 'api')),
      connection_id uuid,
      external_id text NOT NULL,
      contact_id uuid,
      status text NOT NULL DEFAULT 'placed' CHECK (status IN ('placed', 'fulfilled', 'cancelled')),
      total numeric(14, 4) NOT NULL CHECK (total >= 0),
      refunded numeric(14, 4) NOT NULL DEFAULT 0 CHECK (refunded >= 0),
      currency char(3) NOT NULL,
      placed_at timestamptz NOT NULL,
      items jsonb NOT NULL DEFAULT '[]',
      test boolean NOT NULL DEFAULT false,
      attributed_message_id uuid,
      attributed_campaign_id uuid,
      attributed_automation_id uuid,
      attributed_touch_id uuid,
      created_at timestamptz NOT NULL DEFAULT now(),
      updated_at timestamptz NOT NULL DEFAULT now()
    );
    -- A repeat external id of the same source and store connection is the same order.
    CREATE UNIQUE INDEX commerce_orders_external_key ON commerce_orders
      (workspace_id, source, coalesce(connection_id, '00000000-0000-0000-0000-000000000000'::uuid), external_id);
    -- GET /commerce/orders pages newest first by cursor.
    CREATE INDEX commerce_orders_newest_idx ON commerce_orders (workspace_id, placed_at DESC, id DESC);
    CREATE INDEX commerce_orders_contact_idx ON commerce_orders (workspace_id, contact_id, placed_at DESC) WHERE contact_id IS NOT NULL;
    CREATE INDEX commerce_orders_campaign_idx ON commerce_orders (attributed_campaign_id) WHERE attributed_campaign_id IS NOT NULL;
    CREATE INDEX commerce_orders_automation_idx ON commerce_orders (attributed_automation_id) WHERE attributed_automation_id IS NOT NULL;

    CREATE TABLE conversions (
      id uuid PRIMARY KEY,
      workspace_id uuid NOT NULL REFERENCES workspaces (id) ON DELETE CASCADE,
      contact_id uuid,
      name text NOT NULL,
      source text NOT NULL CHECK (source IN ('event', 'order', 'analytics')),
      external_id text NOT NULL,
      value_cents bigint NOT NULL DEFAULT 0,
      currency char(3),
      occurred_at timestamptz NOT NULL,
      order_id uuid REFERENCES commerce_orders (id) ON DELETE CASCADE,
      -- The touch summary at recording time (the lookback window before occurred_at).
      lookback_days smallint NOT NULL,
      touchpoints integer NOT NULL DEFAULT 0,
      first_touch_id uuid,
      first_touch_at timestamptz,
      last_touch_id uuid,
      last_touch_at timestamptz,
      utm_source text,
      utm_medium text,
      utm_campaign text,
      -- The kind of message (or event, analytics) the last touch credits; null with no touch.
      attributed_kind text CHECK (attributed_kind IN ('campaign', 'automation', 'transactional', 'event', 'analytics')),
      first_campaign_id uuid,
      first_automation_id uuid,
      last_campaign_id uuid,
      last_automation_id uuid,
      last_message_id uuid,
      last_node_id text,
      last_touch_url text,
      first_touch_url text,
      created_at timestamptz NOT NULL DEFAULT now(),
      UNIQUE (workspace_id, source, external_id)
    );
    CREATE INDEX conversions_contact_idx ON conversions (workspace_id, contact_id, occurred_at DESC) WHERE contact_id IS NOT NULL;
    CREATE INDEX conversions_newest_idx ON conversions (workspace_id, occurred_at DESC, id DESC);
    CREATE INDEX conversions_last_campaign_idx ON conversions (last_campaign_id, occurred_at DESC) WHERE last_campaign_id IS NOT NULL;
    CREATE INDEX conversions_first_campaign_idx ON conversions (first_campaign_id, occurred_at DESC) WHERE first_campaign_id IS NOT NULL;
    CREATE INDEX conversions_last_automation_idx ON conversions (last_automation_id, occurred_at DESC) WHERE last_automation_id IS NOT NULL;
    CREATE INDEX conversions_first_automation_idx ON conversions (first_automation_id, occurred_at DESC) WHERE first_automation_id IS NOT NULL;

    ALTER TABLE campaigns ADD COLUMN holdout_percent smallint NOT NULL DEFAULT 0 CHECK (holdout_percent BETWEEN 0 AND 50);
    ALTER TABLE campaign_recipients ADD COLUMN holdout boolean NOT NULL DEFAULT false;
  `);
};

export const down: MigrationFn<QueryInterface> = async ({ context }) => {
  await context.sequelize.query(`
    ALTER TABLE campaign_recipients DROP COLUMN holdout;
    ALTER TABLE campaigns DROP COLUMN holdout_percent;
    DROP TABLE conversions;
    DROP TABLE commerce_orders;
    DROP TABLE commerce_products;
    DROP TABLE commerce_settings;
    DROP INDEX utm_touches_automation_idx;
    DROP INDEX utm_touches_campaign_idx;
    DROP INDEX utm_touches_attribution_idx;
    ALTER TABLE utm_touches
      DROP COLUMN is_content, DROP COLUMN canonical_url, DROP COLUMN kind,
      DROP COLUMN campaign_id, DROP COLUMN automation_id, DROP COLUMN journey_node_id;
  `);
};
