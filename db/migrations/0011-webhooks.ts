import type { MigrationFn } from 'umzug';
import type { QueryInterface } from 'sequelize';

/**
 * Webhooks (docs/webhooks.md).
 *
 * - `webhooks`: the endpoints, their secrets sealed with MASTER_KEY (the previous one too while a
 *   rotation lasts), and their health (`failing_since`, `disabled_reason`).
 * - `webhook_deliveries`: one row per event and subscribed endpoint. The row is the outbox entry of its
 *   delivery, as a message row is of its send: the webhook dispatcher leases pending rows, starts their
 *   workflows and keeps them leased while they run (`dispatch_lease_until`; `run` numbers the workflow
 *   runs of a delivery: a manual retry, or a restart after the lease ran out, is a new run).
 * - `webhook_attempts`: every attempt, logged before the request goes out and completed after.
 *
 * Fan-out happens in the database: statement-level triggers on `message_events` and `platform_events`
 * insert the deliveries in the transaction that stores the event, for every enabled endpoint of the
 * workspace subscribed to it. Every code path that stores an event (provider callbacks, the send path,
 * buffered tracking hits in bulk, unsubscribes) therefore fans out, with nothing to call and nothing to
 * forget; an event exists with its deliveries or not at all; the event tables stay append-only (no
 * "fanned out" flag to update per row); a workspace without webhooks pays one index probe per statement.
 * `webhook_event_name` is the one mapping from stored event to webhook event: only human opens and
 * clicks are engagement (decisions), so only they become `email.opened` and `email.clicked`.
 */
export const up: MigrationFn<QueryInterface> = async ({ context }) => {
  await context.sequelize.query(`
    CREATE TABLE webhooks (
      id uuid PRIMARY KEY,
      workspace_id uuid NOT NULL REFERENCES workspaces (id) ON DELETE CASCADE,
      url text NOT NULL,
      description text,
      events text[] NOT NULL,
      enabled boolean NOT NULL DEFAULT true,
      -- Why the service turned the endpoint off: 'gone' (it answered 410) or 'failing' (5 days of failures).
      disabled_reason text,
      secret_sealed text NOT NULL,
      previous_secret_sealed text,
      previous_secret_expires_at timestamptz,
      -- Since when every attempt has failed; any success clears it.
      failing_since timestamptz,
      created_at timestamptz NOT NULL DEFAULT now(),
      updated_at timestamptz NOT NULL DEFAULT now()
    );
    CREATE INDEX webhooks_workspace_idx ON webhooks (workspace_id, created_at DESC, id DESC);
    -- The fan-out's probe, once per stored batch of events.
    CREATE INDEX webhooks_enabled_idx ON webhooks (workspace_id) WHERE enabled;

    CREATE TABLE webhook_deliveries (
      -- Also the requests' webhook-id: stable across every attempt and retry.
      id uuid PRIMARY KEY,
      workspace_id uuid NOT NULL,
      webhook_id uuid NOT NULL REFERENCES webhooks (id) ON DELETE CASCADE,
      event text NOT NULL,
      -- The stored event it reports (no foreign key: event tables stay cheap to append to and to prune).
      message_event_id uuid,
      platform_event_id uuid,
      status text NOT NULL DEFAULT 'pending' CHECK (status IN ('pending', 'succeeded', 'failed')),
      -- The last attempt's answer, and why the delivery failed (or its last attempt did).
      status_code integer,
      error text,
      attempts integer NOT NULL DEFAULT 0,
      next_attempt_at timestamptz,
      -- The request body, built at the first attempt, so every attempt sends the same bytes.
      body text,
      run integer NOT NULL DEFAULT 1,
      dispatch_lease_until timestamptz,
      dispatched_at timestamptz,
      created_at timestamptz NOT NULL DEFAULT now(),
      updated_at timestamptz NOT NULL DEFAULT now(),
      CHECK ((message_event_id IS NULL) <> (platform_event_id IS NULL))
    );
    CREATE INDEX webhook_deliveries_log_idx ON webhook_deliveries (webhook_id, created_at DESC, id DESC);
    -- The outbox: an endpoint's pending deliveries, oldest first (waiting ones and those in flight).
    CREATE INDEX webhook_deliveries_pending_idx ON webhook_deliveries (webhook_id, created_at) WHERE status = 'pending';
    -- Those in flight (or whose lease ran out): at most a few per endpoint, counted every dispatch round.
    CREATE INDEX webhook_deliveries_leased_idx ON webhook_deliveries (webhook_id, dispatch_lease_until)
      WHERE status = 'pending' AND dispatch_lease_until IS NOT NULL;

    CREATE TABLE webhook_attempts (
      delivery_id uuid NOT NULL REFERENCES webhook_deliveries (id) ON DELETE CASCADE,
      attempt integer NOT NULL,
      workspace_id uuid NOT NULL,
      -- 'pending' while the request is out (or if the worker died before its answer was recorded).
      status text NOT NULL CHECK (status IN ('pending', 'succeeded', 'failed')),
      status_code integer,
      duration_ms integer,
      error text,
      started_at timestamptz NOT NULL DEFAULT now(),
      PRIMARY KEY (delivery_id, attempt)
    );

    CREATE FUNCTION webhook_event_name(type text, classification text) RETURNS text
    LANGUAGE sql IMMUTABLE PARALLEL SAFE AS $$
      SELECT CASE type
        WHEN 'sent' THEN 'email.sent'
        WHEN 'delivered' THEN 'email.delivered'
        WHEN 'delivery_delayed' THEN 'email.delivery_delayed'
        WHEN 'bounce' THEN 'email.bounced'
        WHEN 'complaint' THEN 'email.complained'
        WHEN 'failed' THEN 'email.failed'
        WHEN 'unsubscribe' THEN 'email.unsubscribed'
        WHEN 'open' THEN CASE WHEN classification = 'human' THEN 'email.opened' END
        WHEN 'click' THEN CASE WHEN classification = 'human' THEN 'email.clicked' END
        WHEN 'domain.verified' THEN 'domain.verified'
        WHEN 'domain.failed' THEN 'domain.failed'
      END
    $$;

    CREATE FUNCTION webhooks_fan_out_message_events() RETURNS trigger LANGUAGE plpgsql AS $$
    BEGIN
      INSERT INTO webhook_deliveries (id, workspace_id, webhook_id, event, message_event_id)
      SELECT gen_random_uuid(), e.workspace_id, w.id, e.event, e.id
      FROM (SELECT id, workspace_id, message_id, webhook_event_name(type, classification) AS event FROM stored_events) e
      JOIN webhooks w ON w.workspace_id = e.workspace_id AND w.enabled AND (e.event = ANY (w.events) OR '*' = ANY (w.events))
      -- Email events come from email messages; other channels will have events of their own.
      JOIN messages m ON m.id = e.message_id AND m.channel = 'email'
      WHERE e.event IS NOT NULL;
      RETURN NULL;
    END $$;

    CREATE FUNCTION webhooks_fan_out_platform_events() RETURNS trigger LANGUAGE plpgsql AS $$
    BEGIN
      INSERT INTO webhook_deliveries (id, workspace_id, webhook_id, event, platform_event_id)
      SELECT gen_random_uuid(), e.workspace_id, w.id, e.event, e.id
      FROM (SELECT id, workspace_id, webhook_event_name(type, NULL) AS event FROM stored_events) e
      JOIN webhooks w ON w.workspace_id = e.workspace_id AND w.enabled AND (e.event = ANY (w.events) OR '*' = ANY (w.events))
      WHERE e.event IS NOT NULL;
      RETURN NULL;
    END $$;

    CREATE TRIGGER message_events_webhooks AFTER INSERT ON message_events
      REFERENCING NEW TABLE AS stored_events FOR EACH STATEMENT EXECUTE FUNCTION webhooks_fan_out_message_events();
    CREATE TRIGGER platform_events_webhooks AFTER INSERT ON platform_events
      REFERENCING NEW TABLE AS stored_events FOR EACH STATEMENT EXECUTE FUNCTION webhooks_fan_out_platform_events();
  `);
};

export const down: MigrationFn<QueryInterface> = async ({ context }) => {
  await context.sequelize.query(`
    DROP TRIGGER platform_events_webhooks ON platform_events;
    DROP TRIGGER message_events_webhooks ON message_events;
    DROP FUNCTION webhooks_fan_out_platform_events();
    DROP FUNCTION webhooks_fan_out_message_events();
    DROP FUNCTION webhook_event_name(text, text);
    DROP TABLE webhook_attempts;
    DROP TABLE webhook_deliveries;
    DROP TABLE webhooks;
  `);
};
