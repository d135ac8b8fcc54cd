import type { QueryInterface } from 'sequelize';
import type { MigrationFn } from 'umzug';

/**
 * Contacts and audiences. Child tables reference contacts by (workspace_id, contact_id), so a row can
 * never join a contact of one workspace to a tag, list or identity of another. contacts.id is also
 * unique on its own, for tables of later issues that reference a contact by id alone.
 */
export const up: MigrationFn<QueryInterface> = async ({ context }) => {
  await context.sequelize.query(`
    CREATE TABLE contacts (
      id uuid PRIMARY KEY,
      workspace_id uuid NOT NULL REFERENCES workspaces (id) ON DELETE CASCADE,
      attributes jsonb NOT NULL DEFAULT '{}' CHECK (jsonb_typeof(attributes) = 'object'),
      created_at timestamptz NOT NULL DEFAULT now(),
      updated_at timestamptz NOT NULL DEFAULT now(),
      -- Ordered by id within a workspace: segment counts merge-join it with tag and list memberships.
      UNIQUE (workspace_id, id)
    );
    CREATE INDEX contacts_newest_idx ON contacts (workspace_id, created_at DESC, id DESC);
    -- Serves attribute equality in segments and list filters (attributes @> '{"key": value}') for every key.
    CREATE INDEX contacts_attributes_idx ON contacts USING gin (attributes jsonb_path_ops);

    -- The natural key of a contact: one contact per normalised address per channel in a workspace.
    CREATE TABLE contact_identities (
      workspace_id uuid NOT NULL,
      channel text NOT NULL CHECK (channel IN ('email', 'whatsapp', 'telegram')),
      address text NOT NULL,
      contact_id uuid NOT NULL,
      consent text NOT NULL DEFAULT 'unknown' CHECK (consent IN ('unknown', 'opted_in', 'opted_out')),
      verified boolean NOT NULL DEFAULT false,
      is_primary boolean NOT NULL DEFAULT false,
      created_at timestamptz NOT NULL DEFAULT now(),
      updated_at timestamptz NOT NULL DEFAULT now(),
      PRIMARY KEY (workspace_id, channel, address),
      FOREIGN KEY (workspace_id, contact_id) REFERENCES contacts (workspace_id, id) ON DELETE CASCADE
    );
    CREATE INDEX contact_identities_contact_idx ON contact_identities (contact_id, channel);
    CREATE UNIQUE INDEX contact_identities_one_primary_idx ON contact_identities (contact_id, channel) WHERE is_primary;

    CREATE TABLE tags (
      id uuid PRIMARY KEY,
      workspace_id uuid NOT NULL REFERENCES workspaces (id) ON DELETE CASCADE,
      name text NOT NULL,
      color text,
      -- Kept exact by the membership triggers below, so listing tags never counts members.
      contact_count integer NOT NULL DEFAULT 0,
      created_at timestamptz NOT NULL DEFAULT now(),
      UNIQUE (workspace_id, id)
    );
    CREATE UNIQUE INDEX tags_name_idx ON tags (workspace_id, lower(name));

    CREATE TABLE contact_tags (
      workspace_id uuid NOT NULL,
      tag_id uuid NOT NULL,
      contact_id uuid NOT NULL,
      created_at timestamptz NOT NULL DEFAULT now(),
      PRIMARY KEY (tag_id, contact_id),
      FOREIGN KEY (workspace_id, tag_id) REFERENCES tags (workspace_id, id) ON DELETE CASCADE,
      FOREIGN KEY (workspace_id, contact_id) REFERENCES contacts (workspace_id, id) ON DELETE CASCADE
    );
    CREATE INDEX contact_tags_contact_idx ON contact_tags (contact_id, tag_id);

    CREATE TABLE lists (
      id uuid PRIMARY KEY,
      workspace_id uuid NOT NULL REFERENCES workspaces (id) ON DELETE CASCADE,
      name text NOT NULL,
      contact_count integer NOT NULL DEFAULT 0,
      created_at timestamptz NOT NULL DEFAULT now(),
      UNIQUE (workspace_id, id)
    );
    CREATE UNIQUE INDEX lists_name_idx ON lists (workspace_id, lower(name));

    CREATE TABLE list_members (
      workspace_id uuid NOT NULL,
      list_id uuid NOT NULL,
      contact_id uuid NOT NULL,
      created_at timestamptz NOT NULL DEFAULT now(),
      PRIMARY KEY (list_id, contact_id),
      FOREIGN KEY (workspace_id, list_id) REFERENCES lists (workspace_id, id) ON DELETE CASCADE,
      FOREIGN KEY (workspace_id, contact_id) REFERENCES contacts (workspace_id, id) ON DELETE CASCADE
    );
    CREATE INDEX list_members_contact_idx ON list_members (contact_id, list_id);

    -- Member counts move in the same transaction as the memberships, whatever removes them (an explicit
    -- removal, an erased contact's cascade). Statement-level, and tags are updated in id order so that
    -- two concurrent statements touching the same tags cannot deadlock.
    CREATE FUNCTION count_contact_tags() RETURNS trigger LANGUAGE plpgsql AS $$
    DECLARE
      moved record;
    BEGIN
      IF TG_OP = 'INSERT' THEN
        FOR moved IN SELECT tag_id, count(*) AS n FROM new_rows GROUP BY tag_id ORDER BY tag_id LOOP
          UPDATE tags SET contact_count = contact_count + moved.n WHERE id = moved.tag_id;
        END LOOP;
      ELSE
        FOR moved IN SELECT tag_id, count(*) AS n FROM old_rows GROUP BY tag_id ORDER BY tag_id LOOP
          UPDATE tags SET contact_count = contact_count - moved.n WHERE id = moved.tag_id;
        END LOOP;
      END IF;
      RETURN NULL;
    END $$;
    CREATE TRIGGER contact_tags_added AFTER INSERT ON contact_tags
      REFERENCING NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION count_contact_tags();
    CREATE TRIGGER contact_tags_removed AFTER DELETE ON contact_tags
      REFERENCING OLD TABLE AS old_rows FOR EACH STATEMENT EXECUTE FUNCTION count_contact_tags();

    CREATE FUNCTION count_list_members() RETURNS trigger LANGUAGE plpgsql AS $$
    DECLARE
      moved record;
    BEGIN
      IF TG_OP = 'INSERT' THEN
        FOR moved IN SELECT list_id, count(*) AS n FROM new_rows GROUP BY list_id ORDER BY list_id LOOP
          UPDATE lists SET contact_count = contact_count + moved.n WHERE id = moved.list_id;
        END LOOP;
      ELSE
        FOR moved IN SELECT list_id, count(*) AS n FROM old_rows GROUP BY list_id ORDER BY list_id LOOP
          UPDATE lists SET contact_count = contact_count - moved.n WHERE id = moved.list_id;
        END LOOP;
      END IF;
      RETURN NULL;
    END $$;
    CREATE TRIGGER list_members_added AFTER INSERT ON list_members
      REFERENCING NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION count_list_members();
    CREATE TRIGGER list_members_removed AFTER DELETE ON list_members
      REFERENCING OLD TABLE AS old_rows FOR EACH STATEMENT EXECUTE FUNCTION count_list_members();

    CREATE TABLE custom_fields (
      id uuid PRIMARY KEY,
      workspace_id uuid NOT NULL REFERENCES workspaces (id) ON DELETE CASCADE,
      key text NOT NULL,
      label text NOT NULL,
      type text NOT NULL CHECK (type IN ('text', 'number', 'boolean', 'date', 'select', 'multiselect')),
      options text[],
      group_name text,
      archived boolean NOT NULL DEFAULT false,
      created_at timestamptz NOT NULL DEFAULT now(),
      updated_at timestamptz NOT NULL DEFAULT now()
    );
    -- Attribute keys are case-sensitive JSON keys; fields differing only in case would be a trap.
    CREATE UNIQUE INDEX custom_fields_key_idx ON custom_fields (workspace_id, lower(key));

    CREATE TABLE segments (
      id uuid PRIMARY KEY,
      workspace_id uuid NOT NULL REFERENCES workspaces (id) ON DELETE CASCADE,
      name text NOT NULL,
      kind text NOT NULL DEFAULT 'dynamic',
      definition jsonb NOT NULL,
      created_at timestamptz NOT NULL DEFAULT now(),
      updated_at timestamptz NOT NULL DEFAULT now()
    );
    CREATE INDEX segments_newest_idx ON segments (workspace_id, created_at DESC, id DESC);

    -- Addresses never to message again in this workspace (decisions: hard bounces, complaints,
    -- unsubscribes; and erased contacts, so an import cannot bring them back by accident).
    CREATE TABLE suppressions (
      workspace_id uuid NOT NULL REFERENCES workspaces (id) ON DELETE CASCADE,
      channel text NOT NULL,
      address text NOT NULL,
      reason text NOT NULL CHECK (reason IN ('hard_bounce', 'complaint', 'unsubscribed', 'manual', 'erased')),
      created_at timestamptz NOT NULL DEFAULT now(),
      PRIMARY KEY (workspace_id, channel, address)
    );
    CREATE INDEX suppressions_newest_idx ON suppressions (workspace_id, created_at DESC);

    -- Behavioural events of a contact (POST /events lands in a later issue); segments count them.
    CREATE TABLE contact_events (
      id uuid PRIMARY KEY,
      workspace_id uuid NOT NULL,
      contact_id uuid NOT NULL,
      name text NOT NULL,
      properties jsonb NOT NULL DEFAULT '{}',
      occurred_at timestamptz NOT NULL,
      created_at timestamptz NOT NULL DEFAULT now(),
      FOREIGN KEY (workspace_id, contact_id) REFERENCES contacts (workspace_id, id) ON DELETE CASCADE
    );
    -- A contact's timeline, and per-contact counts.
    CREATE INDEX contact_events_contact_idx ON contact_events (workspace_id, contact_id, name, occurred_at);
    -- Segment conditions "performed E N times within a window" scan one event name's window at once.
    CREATE INDEX contact_events_name_idx ON contact_events (workspace_id, name, occurred_at) INCLUDE (contact_id);
  `);
};

export const down: MigrationFn<QueryInterface> = async ({ context }) => {
  await context.sequelize.query(`
    DROP TABLE contact_events;
    DROP TABLE suppressions;
    DROP TABLE segments;
    DROP TABLE custom_fields;
    DROP TABLE list_members;
    DROP FUNCTION count_list_members();
    DROP TABLE lists;
    DROP TABLE contact_tags;
    DROP FUNCTION count_contact_tags();
    DROP TABLE tags;
    DROP TABLE contact_identities;
    DROP TABLE contacts;
  `);
};
