import type { MigrationFn } from 'umzug';
import type { QueryInterface } from 'sequelize';

/**
 * Webhook events of the chat channels (docs/webhooks.md). Until now the fan-out named message events by
 * their type alone and kept email messages only, so a WhatsApp or Telegram message sent no webhook at all.
 *
 * - `message_webhook_event_name(channel, type, classification)`: email events keep their `email.*` names
 *   (through `webhook_event_name`, unchanged for them); a chat message's `sent`, `delivered` and `failed`
 *   become `message.sent`, `message.delivered` and `message.failed`. Its other events (a WhatsApp read, a
 *   fallback) send none.
 * - `webhook_event_name` also names the platform event `message.received`: a customer's WhatsApp or
 *   Telegram message to the workspace, stored by the callbacks as a platform event (it has no message row).
 * - The fan-out joins the message for its channel; webhooks are joined first, so a workspace without one
 *   still costs no read of its messages.
 */
export const up: MigrationFn<QueryInterface> = async ({ context }) => {
  await context.sequelize.query(`
    CREATE OR REPLACE FUNCTION webhook_event_name(type text, classification text) RETURNS text
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
        WHEN 'message.received' THEN 'message.received'
      END
    $$;

    CREATE FUNCTION message_webhook_event_name(channel text, type text, classification text) RETURNS text
    LANGUAGE sql IMMUTABLE PARALLEL SAFE AS $$
      SELECT CASE
        WHEN channel = 'email' THEN webhook_event_name(type, classification)
        WHEN type IN ('sent', 'delivered', 'failed') THEN 'message.' || type
      END
    $$;

    CREATE OR REPLACE FUNCTION webhooks_fan_out_message_events() RETURNS trigger LANGUAGE plpgsql AS $$
    BEGIN
      INSERT INTO webhook_deliveries (id, workspace_id, webhook_id, event, message_event_id)
      SELECT gen_random_uuid(), e.workspace_id, e.webhook_id, e.event, e.id
      FROM (
        SELECT s.id, s.workspace_id, w.id AS webhook_id, w.events, message_webhook_event_name(m.channel, s.type, s.classification) AS event
        FROM stored_events s
        JOIN webhooks w ON w.workspace_id = s.workspace_id AND w.enabled
        JOIN messages m ON m.id = s.message_id
      ) e
      WHERE e.event IS NOT NULL AND (e.event = ANY (e.events) OR '*' = ANY (e.events));
      RETURN NULL;
    END $$;
  `);
};

export const down: MigrationFn<QueryInterface> = async ({ context }) => {
  await context.sequelize.query(`
    CREATE OR REPLACE FUNCTION webhooks_fan_out_message_events() RETURNS trigger LANGUAGE plpgsql AS $$
    BEGIN
      INSERT INTO webhook_deliveries (id, workspace_id, webhook_id, event, message_event_id)
      SELECT gen_random_uuid(), e.workspace_id, w.id, e.event, e.id
      FROM (SELECT id, workspace_id, message_id, webhook_event_name(type, classification) AS event FROM stored_events) e
      JOIN webhooks w ON w.workspace_id = e.workspace_id AND w.enabled AND (e.event = ANY (w.events) OR '*' = ANY (w.events))
      JOIN messages m ON m.id = e.message_id AND m.channel = 'email'
      WHERE e.event IS NOT NULL;
      RETURN NULL;
    END $$;
    DROP FUNCTION message_webhook_event_name(text, text, text);
  `);
};
