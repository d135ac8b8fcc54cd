import type { MigrationFn } from 'umzug';
import type { QueryInterface } from 'sequelize';

/**
 * What the inbound-mail workflow writes when it processes an accepted message (issue 16).
 *
 * - `inbox_messages.contact_id`: the workspace's contact whose email identity sent the message. The contact
 *   journey (GET /contacts/:id/journey) reads a contact's received mail by `inbox_messages_contact_idx`, newest
 *   first. No foreign key: a contact erased later keeps the mail in its inbox (the mail is the inbox's, not the
 *   contact's); the journey of an erased contact is never read.
 * - `inbox_messages.parse_defects`: why a message was stored `malformed` (no header/body separator, a multipart
 *   without its boundary or closing delimiter, no readable From), so a person reading it knows what was lost.
 * - `webhook_event_name` also names the platform event `email.received` (an inbound message processed into a
 *   thread), so the platform-event fan-out delivers it to webhooks subscribed to it or to `*`.
 */
export const up: MigrationFn<QueryInterface> = async ({ context }) => {
  await context.sequelize.query(`
    ALTER TABLE inbox_messages ADD COLUMN contact_id uuid, ADD COLUMN parse_defects text[] NOT NULL DEFAULT '{}';
    CREATE INDEX inbox_messages_contact_idx ON inbox_messages (workspace_id, contact_id, created_at DESC) WHERE contact_id IS NOT NULL;

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
        WHEN 'email.received' THEN 'email.received'
      END
    $$;
  `);
};

export const down: MigrationFn<QueryInterface> = async ({ context }) => {
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
    DROP INDEX inbox_messages_contact_idx;
    ALTER TABLE inbox_messages DROP COLUMN contact_id, DROP COLUMN parse_defects;
  `);
};
