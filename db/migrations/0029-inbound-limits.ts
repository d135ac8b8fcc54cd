import type { MigrationFn } from 'umzug';
import type { QueryInterface } from 'sequelize';

/**
 * Inbound listener limits (issue 29; docs/inboxes.md, Limits).
 *
 * - `inbound_storage`: the raw bytes of received mail a workspace holds (the sum of `raw_size` of its inbound
 *   rows; each inbox's copy counts), which the listener compares with INBOUND_STORAGE_QUOTA_BYTES before a 250.
 *   Moved by statement triggers on `inbox_messages`, so every path that adds or removes rows (the listener, an
 *   inbox deleted with its messages, a workspace deleted) keeps it exact without scanning on each read. The
 *   delete side only updates: a workspace being deleted has already lost its row, and an upsert would recreate
 *   it against a workspace that is going away.
 * - `inbound_recipients` notifications: the listener caches who a recipient is and a workspace's rules; these
 *   triggers tell it, on commit only (NOTIFY is transactional), that a domain's mailboxes or a workspace's rules
 *   changed, whoever changed them (the API, the domain-verification workflow, an operator's SQL). Payloads are
 *   `domain:<name>` and `rules:<workspaceId>`.
 */
export const up: MigrationFn<QueryInterface> = async ({ context }) => {
  await context.sequelize.query(`
    CREATE TABLE inbound_storage (
      workspace_id uuid PRIMARY KEY REFERENCES workspaces (id) ON DELETE CASCADE,
      bytes bigint NOT NULL DEFAULT 0,
      messages bigint NOT NULL DEFAULT 0
    );
    INSERT INTO inbound_storage (workspace_id, bytes, messages)
      SELECT workspace_id, sum(raw_size), count(*) FROM inbox_messages
       WHERE direction = 'in' AND raw_size IS NOT NULL GROUP BY workspace_id;

    CREATE FUNCTION inbound_storage_added() RETURNS trigger LANGUAGE plpgsql AS $$
    BEGIN
      INSERT INTO inbound_storage AS s (workspace_id, bytes, messages)
        SELECT workspace_id, sum(raw_size), count(*) FROM added
         WHERE direction = 'in' AND raw_size IS NOT NULL GROUP BY workspace_id
      ON CONFLICT (workspace_id) DO UPDATE SET bytes = s.bytes + excluded.bytes, messages = s.messages + excluded.messages;
      RETURN NULL;
    END $$;
    CREATE FUNCTION inbound_storage_removed() RETURNS trigger LANGUAGE plpgsql AS $$
    BEGIN
      UPDATE inbound_storage s SET bytes = greatest(0, s.bytes - g.bytes), messages = greatest(0, s.messages - g.messages)
        FROM (SELECT workspace_id, sum(raw_size) AS bytes, count(*) AS messages FROM removed
               WHERE direction = 'in' AND raw_size IS NOT NULL GROUP BY workspace_id) g
       WHERE s.workspace_id = g.workspace_id;
      RETURN NULL;
    END $$;
    CREATE TRIGGER inbound_storage_added AFTER INSERT ON inbox_messages
      REFERENCING NEW TABLE AS added FOR EACH STATEMENT EXECUTE FUNCTION inbound_storage_added();
    CREATE TRIGGER inbound_storage_removed AFTER DELETE ON inbox_messages
      REFERENCING OLD TABLE AS removed FOR EACH STATEMENT EXECUTE FUNCTION inbound_storage_removed();

    CREATE FUNCTION inbound_recipients_domain_changed() RETURNS trigger LANGUAGE plpgsql AS $$
    BEGIN
      IF TG_OP <> 'INSERT' THEN PERFORM pg_notify('inbound_recipients', 'domain:' || OLD.name); END IF;
      IF TG_OP <> 'DELETE' THEN PERFORM pg_notify('inbound_recipients', 'domain:' || NEW.name); END IF;
      RETURN NULL;
    END $$;
    CREATE TRIGGER inbound_recipients_domain_written AFTER INSERT OR DELETE ON domains
      FOR EACH ROW EXECUTE FUNCTION inbound_recipients_domain_changed();
    -- Domain checks rewrite their row often; only what decides a recipient matters.
    CREATE TRIGGER inbound_recipients_domain_updated AFTER UPDATE ON domains FOR EACH ROW
      WHEN (OLD.name IS DISTINCT FROM NEW.name OR OLD.status IS DISTINCT FROM NEW.status OR OLD.inbound_enabled IS DISTINCT FROM NEW.inbound_enabled)
      EXECUTE FUNCTION inbound_recipients_domain_changed();

    CREATE FUNCTION inbound_recipients_inbox_changed() RETURNS trigger LANGUAGE plpgsql AS $$
    DECLARE
      domain_name text;
    BEGIN
      -- An inbox deleted with its domain finds no name: the domain's own trigger has told already.
      FOR domain_name IN SELECT d.name FROM domains d WHERE d.id IN (
        SELECT (CASE WHEN TG_OP = 'DELETE' THEN OLD.domain_id ELSE NEW.domain_id END)
        UNION SELECT (CASE WHEN TG_OP = 'UPDATE' THEN OLD.domain_id END))
      LOOP
        PERFORM pg_notify('inbound_recipients', 'domain:' || domain_name);
      END LOOP;
      RETURN NULL;
    END $$;
    CREATE TRIGGER inbound_recipients_inbox_changed AFTER INSERT OR UPDATE OR DELETE ON inboxes
      FOR EACH ROW EXECUTE FUNCTION inbound_recipients_inbox_changed();

    CREATE FUNCTION inbound_recipients_rules_changed() RETURNS trigger LANGUAGE plpgsql AS $$
    BEGIN
      PERFORM pg_notify('inbound_recipients', 'rules:' || (CASE WHEN TG_OP = 'DELETE' THEN OLD.workspace_id ELSE NEW.workspace_id END));
      RETURN NULL;
    END $$;
    CREATE TRIGGER inbound_recipients_rules_changed AFTER INSERT OR UPDATE OR DELETE ON email_rules
      FOR EACH ROW EXECUTE FUNCTION inbound_recipients_rules_changed();
  `);
};

export const down: MigrationFn<QueryInterface> = async ({ context }) => {
  await context.sequelize.query(`
    DROP TRIGGER inbound_recipients_rules_changed ON email_rules;
    DROP TRIGGER inbound_recipients_inbox_changed ON inboxes;
    DROP TRIGGER inbound_recipients_domain_updated ON domains;
    DROP TRIGGER inbound_recipients_domain_written ON domains;
    DROP TRIGGER inbound_storage_removed ON inbox_messages;
    DROP TRIGGER inbound_storage_added ON inbox_messages;
    DROP FUNCTION inbound_recipients_rules_changed();
    DROP FUNCTION inbound_recipients_inbox_changed();
    DROP FUNCTION inbound_recipients_domain_changed();
    DROP FUNCTION inbound_storage_removed();
    DROP FUNCTION inbound_storage_added();
    DROP TABLE inbound_storage;
  `);
};
