import type { MigrationFn } from 'umzug';
import type { QueryInterface } from 'sequelize';

/**
 * Issue 32: a file replaced through a signed upload (PUT /attachments/:id with a size). Until the new bytes
 * are uploaded and confirmed the attachment keeps serving its current file (a live journey must not send
 * without it), so the replacement waits beside it: `{ storageKey, filename, contentType, size }`, the key
 * its upload URL points at and what was declared. Confirming moves it into the row's own columns.
 */
export const up: MigrationFn<QueryInterface> = async ({ context }) => {
  await context.sequelize.query('ALTER TABLE attachments ADD COLUMN replacement jsonb');
};

export const down: MigrationFn<QueryInterface> = async ({ context }) => {
  await context.sequelize.query('ALTER TABLE attachments DROP COLUMN replacement');
};
