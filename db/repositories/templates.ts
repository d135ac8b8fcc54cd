import { randomUUID } from 'node:crypto';
import { QueryTypes, type Sequelize, type Transaction, UniqueConstraintError } from 'sequelize';
import { automationsUsing } from './automations';
import {
  type ChannelText,
  looksLikeTemplateId,
  type TemplateChannel,
  type TemplateContent,
  type TemplateFormat,
  type TemplateVersionContent,
} from '../../core/templates/content';

export interface TemplateSummaryRecord {
  id: string;
  workspaceId: string;
  name: string;
  channels: TemplateChannel[];
  format: TemplateFormat;
  subject: string | null;
  variables: string[];
  /** The current version: what a send made now renders. */
  versionId: string;
  version: number;
  createdAt: Date;
  updatedAt: Date;
}

export interface TemplateRecord extends TemplateSummaryRecord {
  body: string;
  channelText: ChannelText | null;
}

export interface TemplateVersionRecord extends TemplateVersionContent {
  templateId: string;
  version: number;
  variables: string[];
  createdAt: Date;
}

interface TemplateRow {
  id: string;
  workspace_id: string;
  name: string;
  created_at: Date;
  updated_at: Date;
  version_id: string;
  version: number;
  channels: TemplateChannel[];
  format: TemplateFormat;
  subject: string | null;
  body?: string;
  channel_text?: ChannelText | null;
  variables: string[];
}

const SUMMARY_COLUMNS = `t.id, t.workspace_id, t.name, t.created_at, t.updated_at,
  v.id AS version_id, v.version, v.channels, v.format, v.subject, v.variables`;
const COLUMNS = `${SUMMARY_COLUMNS}, v.body, v.channel_text`;
const CURRENT = 'templates t JOIN template_versions v ON v.template_id = t.id AND v.version = t.current_version';

const toSummary = (row: TemplateRow): TemplateSummaryRecord => ({
  id: row.id,
  workspaceId: row.workspace_id,
  name: row.name,
  channels: row.channels,
  format: row.format,
  subject: row.subject,
  variables: row.variables,
  versionId: row.version_id,
  version: row.version,
  createdAt: row.created_at,
  updatedAt: row.updated_at,
});

const toRecord = (row: TemplateRow): TemplateRecord => ({
  ...toSummary(row),
  body: row.body ?? '',
  channelText: row.channel_text ?? null,
});

export interface TemplateDraft extends TemplateContent {
  variables: string[];
}

/** Whether a failed write collided with another live template's name (the unique index decides). */
export function isTemplateNameTaken(error: unknown): boolean {
  return error instanceof UniqueConstraintError && (error.original as { constraint?: string } | undefined)?.constraint === 'templates_name_idx';
}

async function insertVersion(
  db: Sequelize,
  workspaceId: string,
  templateId: string,
  version: number,
  draft: TemplateDraft,
  transaction: Transaction,
): Promise<void> {
  await db.query(
    `INSERT INTO template_versions (id, workspace_id, template_id, version, channels, format, subject, body, channel_text, variables)
     VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10)`,
    {
      bind: [
        randomUUID(),
        workspaceId,
        templateId,
        version,
        draft.channels,
        draft.format,
        draft.subject,
        draft.body,
        draft.channelText === null ? null : JSON.stringify(draft.channelText),
        draft.variables,
      ],
      transaction,
    },
  );
}

async function findCurrent(db: Sequelize, workspaceId: string, templateId: string, transaction?: Transaction): Promise<TemplateRecord | null> {
  const rows = await db.query<TemplateRow>(
    `SELECT ${COLUMNS} FROM ${CURRENT} WHERE t.workspace_id = $1 AND t.id = $2 AND t.deleted_at IS NULL`,
    { bind: [workspaceId, templateId], type: QueryTypes.SELECT, transaction },
  );
  return rows[0] ? toRecord(rows[0]) : null;
}

/**
 * Locks a live template's row until the transaction ends. The lock is taken alone, and the content read
 * by a later statement: a locking read that joins the versions would, after waiting for a concurrent
 * change, re-check the new template row against the old version row and see stale content.
 */
async function lockTemplate(db: Sequelize, workspaceId: string, templateId: string, transaction: Transaction): Promise<boolean> {
  const rows = await db.query<{ id: string }>(
    'SELECT id FROM templates WHERE workspace_id = $1 AND id = $2 AND deleted_at IS NULL FOR UPDATE',
    { bind: [workspaceId, templateId], type: QueryTypes.SELECT, transaction },
  );
  return rows.length > 0;
}

/** Creates the template and its version 1. Throws a unique violation (see isTemplateNameTaken) when the name is taken. */
export async function insertTemplate(db: Sequelize, workspaceId: string, name: string, draft: TemplateDraft): Promise<TemplateRecord> {
  const id = randomUUID();
  return db.transaction(async (transaction) => {
    await db.query('INSERT INTO templates (id, workspace_id, name, current_version) VALUES ($1, $2, $3, 1)', {
      bind: [id, workspaceId, name],
      transaction,
    });
    await insertVersion(db, workspaceId, id, 1, draft, transaction);
    return (await findCurrent(db, workspaceId, id, transaction)) as TemplateRecord;
  });
}

/** Live templates, newest first, without their bodies. */
export async function listTemplates(
  db: Sequelize,
  workspaceId: string,
  page: { limit: number; offset: number },
): Promise<TemplateSummaryRecord[]> {
  const rows = await db.query<TemplateRow>(
    `SELECT ${SUMMARY_COLUMNS} FROM ${CURRENT}
     WHERE t.workspace_id = $1 AND t.deleted_at IS NULL
     ORDER BY t.created_at DESC, t.id DESC LIMIT $2 OFFSET $3`,
    { bind: [workspaceId, page.limit, page.offset], type: QueryTypes.SELECT },
  );
  return rows.map(toSummary);
}

export async function findTemplate(db: Sequelize, workspaceId: string, templateId: string): Promise<TemplateRecord | null> {
  return findCurrent(db, workspaceId, templateId);
}

/** A send's `templateId`: the template's id, or its name in any case. */
export async function findTemplateByIdOrName(db: Sequelize, workspaceId: string, idOrName: string): Promise<TemplateRecord | null> {
  if (looksLikeTemplateId(idOrName)) return findCurrent(db, workspaceId, idOrName);
  const rows = await db.query<TemplateRow>(
    `SELECT ${COLUMNS} FROM ${CURRENT} WHERE t.workspace_id = $1 AND lower(t.name) = lower($2) AND t.deleted_at IS NULL`,
    { bind: [workspaceId, idOrName], type: QueryTypes.SELECT },
  );
  return rows[0] ? toRecord(rows[0]) : null;
}

/** One version, even of a template deleted since: what a queued message renders with. */
export async function findTemplateVersion(db: Sequelize, workspaceId: string, versionId: string): Promise<TemplateVersionRecord | null> {
  const rows = await db.query<{
    id: string;
    template_id: string;
    version: number;
    channels: TemplateChannel[];
    format: TemplateFormat;
    subject: string | null;
    body: string;
    channel_text: ChannelText | null;
    variables: string[];
    created_at: Date;
  }>('SELECT * FROM template_versions WHERE workspace_id = $1 AND id = $2', {
    bind: [workspaceId, versionId],
    type: QueryTypes.SELECT,
  });
  const row = rows[0];
  if (!row) return null;
  return {
    id: row.id,
    templateId: row.template_id,
    version: row.version,
    channels: row.channels,
    format: row.format,
    subject: row.subject,
    body: row.body,
    channelText: row.channel_text,
    variables: row.variables,
    createdAt: row.created_at,
  };
}

/** What a PATCH changes: a new name, new content (a new version), or both. */
export interface TemplateChange {
  name?: string;
  draft?: TemplateDraft;
}

/**
 * Applies a change computed from the current state under the row's lock, so two concurrent PATCHes of
 * different fields both land and versions number without gaps. `decide` may throw to refuse (nothing is
 * written). Null when the workspace has no such live template. A taken name throws as in insertTemplate.
 */
export async function updateTemplate(
  db: Sequelize,
  workspaceId: string,
  templateId: string,
  decide: (current: TemplateRecord) => TemplateChange,
): Promise<TemplateRecord | null> {
  return db.transaction(async (transaction) => {
    if (!(await lockTemplate(db, workspaceId, templateId, transaction))) return null;
    const current = (await findCurrent(db, workspaceId, templateId, transaction)) as TemplateRecord;
    const change = decide(current);
    const version = change.draft ? current.version + 1 : current.version;
    if (change.draft) await insertVersion(db, workspaceId, templateId, version, change.draft, transaction);
    await db.query(
      `UPDATE templates SET name = $3, current_version = $4, updated_at = now() WHERE workspace_id = $1 AND id = $2`,
      { bind: [workspaceId, templateId, change.name ?? current.name, version], transaction },
    );
    return findCurrent(db, workspaceId, templateId, transaction);
  });
}

export type TemplateDeletion = 'deleted' | 'not_found' | { inUseBy: 'campaign' } | { inUseBy: 'automation'; automation: { id: string; name: string } };

/**
 * Soft delete: the name is free again, and the versions stay for the messages rendered from them. Refused
 * while a campaign or a live automation sends with it. The template row stays locked while the campaign check runs, so a campaign that takes the same row with
 * FOR SHARE while it starts using the template cannot slip in between check and delete.
 */
export async function deleteTemplate(db: Sequelize, workspaceId: string, templateId: string): Promise<TemplateDeletion> {
  return db.transaction(async (transaction) => {
    if (!(await lockTemplate(db, workspaceId, templateId, transaction))) return 'not_found';
    if (await templateInUse(db, workspaceId, templateId, transaction)) return { inUseBy: 'campaign' };
    const [automation] = await automationsUsing(db, workspaceId, { templateId }, transaction);
    if (automation) return { inUseBy: 'automation', automation };
    await db.query('UPDATE templates SET deleted_at = now() WHERE workspace_id = $1 AND id = $2', {
      bind: [workspaceId, templateId],
      transaction,
    });
    return 'deleted';
  });
}

/**
 * Whether a campaign still uses the template (the spec: DELETE answers 409 then): one that names it and
 * has not finished (sent, canceled or failed), drafts included. A campaign takes the template row FOR
 * SHARE while it starts using it (db/repositories/campaigns.ts), so this check under the delete's row
 * lock cannot miss one.
 */
export async function templateInUse(db: Sequelize, workspaceId: string, templateId: string, transaction?: Transaction): Promise<boolean> {
  const [use] = await db.query<{ used: boolean }>(
    `SELECT EXISTS (
       SELECT 1 FROM campaigns
       WHERE template_id = $2 AND workspace_id = $1 AND status NOT IN ('sent', 'canceled', 'failed')
     ) AS used`,
    { bind: [workspaceId, templateId], type: QueryTypes.SELECT, transaction },
  );
  return use.used;
}
