import type { MigrationFn } from 'umzug';
import type { QueryInterface } from 'sequelize';

export const up: MigrationFn<QueryInterface> = async ({ context }) => {
  await context.sequelize.query(`
    -- A template is its name and a pointer to its current version; the content lives in versions, which
    -- are never changed or removed, so a message can always say which content rendered it.
    CREATE TABLE templates (
      id uuid PRIMARY KEY,
      workspace_id uuid NOT NULL REFERENCES workspaces (id) ON DELETE CASCADE,
      name text NOT NULL,
      current_version integer NOT NULL,
      created_at timestamptz NOT NULL DEFAULT now(),
      updated_at timestamptz NOT NULL DEFAULT now(),
      -- Deleting keeps the row (and its versions) for the messages that were rendered from it.
      deleted_at timestamptz
    );
    -- A send names a template by id or by name, so a live name is unique in its workspace, whatever its case.
    CREATE UNIQUE INDEX templates_name_idx ON templates (workspace_id, lower(name)) WHERE deleted_at IS NULL;
    CREATE INDEX templates_recent_idx ON templates (workspace_id, created_at DESC, id DESC) WHERE deleted_at IS NULL;

    CREATE TABLE template_versions (
      id uuid PRIMARY KEY,
      workspace_id uuid NOT NULL REFERENCES workspaces (id) ON DELETE CASCADE,
      template_id uuid NOT NULL REFERENCES templates (id) ON DELETE CASCADE,
      version integer NOT NULL,
      channels text[] NOT NULL,
      format text NOT NULL CHECK (format IN ('markdown', 'html', 'text', 'blocks')),
      subject text,
      body text NOT NULL,
      channel_text jsonb,
      -- Derived from the content when the version is written (the spec: found, never declared).
      variables text[] NOT NULL,
      created_at timestamptz NOT NULL DEFAULT now(),
      UNIQUE (template_id, version)
    );

    CREATE TABLE attachments (
      id uuid PRIMARY KEY,
      workspace_id uuid NOT NULL REFERENCES workspaces (id) ON DELETE CASCADE,
      filename text NOT NULL,
      -- Declared at creation; replaced by what the store reports once a signed upload is reconciled.
      content_type text NOT NULL,
      size bigint NOT NULL,
      status text NOT NULL CHECK (status IN ('pending', 'ready', 'deleted')),
      -- 'upload': POST /attachments. 'send': a send's content or url item, stored once so every copy
      -- and every retry of the message sends the same bytes.
      origin text NOT NULL CHECK (origin IN ('upload', 'send')),
      source_url text,
      storage_key text NOT NULL,
      created_at timestamptz NOT NULL DEFAULT now(),
      ready_at timestamptz,
      deleted_at timestamptz
    );
    CREATE INDEX attachments_uploads_idx ON attachments (workspace_id, created_at DESC, id DESC)
      WHERE origin = 'upload' AND status <> 'deleted';
  `);
};

export const down: MigrationFn<QueryInterface> = async ({ context }) => {
  await context.sequelize.query('DROP TABLE attachments; DROP TABLE template_versions; DROP TABLE templates;');
};
