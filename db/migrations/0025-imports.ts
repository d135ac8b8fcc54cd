import type { MigrationFn } from 'umzug';
import type { QueryInterface } from 'sequelize';

/**
 * Contact imports (issue 18; decisions.md "Imports"). One row per import job: where its file is, how its
 * columns map, its phase, and its progress. The counters, the kept errors and the checkpoint are written in
 * the same transaction as each batch of contacts, so after a crash the job says exactly which rows are in:
 * the batch after `checkpoint_offset` (a byte offset in the stored file, always at a record boundary) is
 * redone, nothing before it is. `storage_key` is the file in our own blob store (the attachment's, or the
 * copy of a URL's file made in the `downloading` phase); `columns` is the header row, read once, so a
 * slice that resumes mid-file knows the column names.
 */
export const up: MigrationFn<QueryInterface> = async ({ context }) => {
  await context.sequelize.query(`
    CREATE TABLE import_jobs (
      id uuid PRIMARY KEY,
      workspace_id uuid NOT NULL REFERENCES workspaces (id) ON DELETE CASCADE,
      provider text NOT NULL CHECK (provider IN ('csv', 'mailchimp', 'listmonk')),
      source_attachment_id uuid,
      source_url text,
      storage_key text,
      mapping jsonb NOT NULL CHECK (jsonb_typeof(mapping) = 'object'),
      options jsonb NOT NULL DEFAULT '{}' CHECK (jsonb_typeof(options) = 'object'),
      phase text NOT NULL DEFAULT 'queued'
        CHECK (phase IN ('queued', 'downloading', 'counting', 'importing', 'completed', 'failed', 'canceled')),
      columns text[],
      total integer,
      processed integer NOT NULL DEFAULT 0,
      created integer NOT NULL DEFAULT 0,
      updated integer NOT NULL DEFAULT 0,
      failed integer NOT NULL DEFAULT 0,
      -- The first 100 row errors, [{ line, message }], in file order.
      errors jsonb NOT NULL DEFAULT '[]' CHECK (jsonb_typeof(errors) = 'array'),
      checkpoint_offset bigint NOT NULL DEFAULT 0,
      checkpoint_line integer NOT NULL DEFAULT 0,
      failure_reason text,
      created_at timestamptz NOT NULL DEFAULT now(),
      started_at timestamptz,
      finished_at timestamptz,
      updated_at timestamptz NOT NULL DEFAULT now(),
      CHECK ((source_attachment_id IS NULL) <> (source_url IS NULL))
    );
    CREATE INDEX import_jobs_newest_idx ON import_jobs (workspace_id, created_at DESC, id DESC);
  `);
};

export const down: MigrationFn<QueryInterface> = async ({ context }) => {
  await context.sequelize.query('DROP TABLE import_jobs');
};
