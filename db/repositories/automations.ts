import { randomUUID } from 'node:crypto';
import { QueryTypes, type Sequelize, type Transaction } from 'sequelize';
import type { EventMatch, JourneyGraph } from '../../core/journeys/graph';
import type { GraphInput } from '../../core/journeys/graph-schema';

export type AutomationStatus = 'draft' | 'active' | 'paused' | 'archived';

/** What is being edited, as the client wrote it (input form, durations unparsed). */
export interface AutomationDraft {
  triggers: EventMatch[];
  goal: EventMatch | null;
  graph: GraphInput;
}

export interface AutomationRecord {
  id: string;
  workspaceId: string;
  name: string;
  description: string | null;
  status: AutomationStatus;
  draft: AutomationDraft;
  draftVersionId: string;
  currentVersionId: string | null;
  /** The current version's number; null before the first activation. */
  version: number | null;
  activeEnrollments: number;
  createdAt: Date;
  updatedAt: Date;
}

export interface AutomationVersionRecord {
  id: string;
  automationId: string;
  version: number;
  triggers: EventMatch[];
  goal: EventMatch | null;
  graph: JourneyGraph;
  createdAt: Date;
}

interface AutomationRow {
  id: string;
  workspace_id: string;
  name: string;
  description: string | null;
  status: AutomationStatus;
  draft: AutomationDraft;
  draft_version_id: string;
  current_version_id: string | null;
  version: number | null;
  active_enrollments: string;
  created_at: Date;
  updated_at: Date;
}

const toAutomation = (row: AutomationRow): AutomationRecord => ({
  id: row.id,
  workspaceId: row.workspace_id,
  name: row.name,
  description: row.description,
  status: row.status,
  draft: row.draft,
  draftVersionId: row.draft_version_id,
  currentVersionId: row.current_version_id,
  version: row.version,
  activeEnrollments: Number(row.active_enrollments),
  createdAt: row.created_at,
  updatedAt: row.updated_at,
});

// The version number and the active count come with every read: the summary of the spec carries both.
// The count uses enrollments_one_active_idx (workspace, automation, contact WHERE active).
const SELECT_AUTOMATION = `
  SELECT a.*, v.version,
    (SELECT count(*) FROM enrollments e WHERE e.workspace_id = a.workspace_id AND e.automation_id = a.id AND e.status = 'active') AS active_enrollments
  FROM automations a LEFT JOIN automation_versions v ON v.id = a.current_version_id`;

export async function insertAutomation(
  db: Sequelize,
  workspaceId: string,
  input: { name: string; description: string | null; draft: AutomationDraft },
): Promise<AutomationRecord> {
  const id = randomUUID();
  await db.query(
    `INSERT INTO automations (id, workspace_id, name, description, draft, draft_version_id) VALUES ($1, $2, $3, $4, $5::jsonb, $6)`,
    { bind: [id, workspaceId, input.name, input.description, JSON.stringify(input.draft), randomUUID()] },
  );
  return (await findAutomation(db, workspaceId, id)) as AutomationRecord;
}

export async function findAutomation(db: Sequelize, workspaceId: string, automationId: string): Promise<AutomationRecord | null> {
  const rows = await db.query<AutomationRow>(`${SELECT_AUTOMATION} WHERE a.workspace_id = $1 AND a.id = $2`, {
    bind: [workspaceId, automationId],
    type: QueryTypes.SELECT,
  });
  return rows[0] ? toAutomation(rows[0]) : null;
}

export async function listAutomations(db: Sequelize, workspaceId: string, page: { limit: number; offset: number }): Promise<{ rows: AutomationRecord[]; total: number }> {
  const [rows, counted] = await Promise.all([
    db.query<AutomationRow>(`${SELECT_AUTOMATION} WHERE a.workspace_id = $1 ORDER BY a.created_at DESC, a.id DESC LIMIT $2 OFFSET $3`, {
      bind: [workspaceId, page.limit, page.offset],
      type: QueryTypes.SELECT,
    }),
    db.query<{ total: string }>('SELECT count(*) AS total FROM automations WHERE workspace_id = $1', { bind: [workspaceId], type: QueryTypes.SELECT }),
  ]);
  return { rows: rows.map(toAutomation), total: Number(counted[0].total) };
}

export async function findAutomationVersion(db: Sequelize, workspaceId: string, versionId: string): Promise<AutomationVersionRecord | null> {
  const rows = await db.query<{ id: string; automation_id: string; version: number; triggers: EventMatch[]; goal: EventMatch | null; graph: JourneyGraph; created_at: Date }>(
    'SELECT id, automation_id, version, triggers, goal, graph, created_at FROM automation_versions WHERE workspace_id = $1 AND id = $2',
    { bind: [workspaceId, versionId], type: QueryTypes.SELECT },
  );
  const row = rows[0];
  return row ? { id: row.id, automationId: row.automation_id, version: row.version, triggers: row.triggers, goal: row.goal, graph: row.graph, createdAt: row.created_at } : null;
}

export type DraftUpdate = { state: 'not-found' } | { state: 'archived' } | { state: 'updated' };

/**
 * Edits the draft fields given. A change of triggers, goal or graph (jsonb equality: the same definition
 * sent again is no change) gives the draft a new version id, so
 * an activation knows whether there is anything to publish (draft_version_id = current_version_id means
 * the draft is what runs), and an activation that read an older draft cannot publish it under the new id.
 */
export async function updateAutomationDraft(
  db: Sequelize,
  workspaceId: string,
  automationId: string,
  change: { name?: string; description?: string | null; draft?: AutomationDraft },
): Promise<DraftUpdate> {
  const rows = await db.query<{ status: AutomationStatus; updated: boolean }>(
    `WITH target AS (SELECT id, status FROM automations WHERE workspace_id = $1 AND id = $2 FOR UPDATE),
     updated AS (
       UPDATE automations a SET
         name = COALESCE($3, a.name),
         description = CASE WHEN $4::boolean THEN $5 ELSE a.description END,
         draft = COALESCE($6::jsonb, a.draft),
         draft_version_id = CASE WHEN $6::jsonb IS NULL OR $6::jsonb = a.draft THEN a.draft_version_id ELSE gen_random_uuid() END,
         updated_at = now()
       FROM target WHERE a.id = target.id AND target.status <> 'archived'
       RETURNING a.id
     )
     SELECT target.status, EXISTS (SELECT 1 FROM updated) AS updated FROM target`,
    {
      bind: [
        workspaceId,
        automationId,
        change.name ?? null,
        change.description !== undefined,
        change.description ?? null,
        change.draft ? JSON.stringify(change.draft) : null,
      ],
      type: QueryTypes.SELECT,
    },
  );
  if (!rows[0]) return { state: 'not-found' };
  return rows[0].updated ? { state: 'updated' } : { state: 'archived' };
}

/** What an activation publishes: the draft checked and normalized, with the event names it reacts to. */
export interface PublishedVersion {
  /** The draft version id the checks were made on. */
  draftVersionId: string;
  triggers: EventMatch[];
  goal: EventMatch | null;
  graph: JourneyGraph;
  triggerEvents: string[];
  listens: string[];
}

export type ActivationOutcome =
  | { state: 'not-found' }
  | { state: 'archived' }
  /** The draft was edited after it was checked: nothing published. */
  | { state: 'draft-changed' }
  | { state: 'active'; published: boolean };

/**
 * Makes the automation active, publishing the checked draft as the next immutable version unless it is
 * already the current one (a resume after a pause). One transaction holding the automation's row, so
 * two activations at once publish one version.
 */
export async function activateAutomation(db: Sequelize, workspaceId: string, automationId: string, version: PublishedVersion): Promise<ActivationOutcome> {
  return db.transaction(async (transaction): Promise<ActivationOutcome> => {
    const [row] = await db.query<{ status: AutomationStatus; draft_version_id: string; current_version_id: string | null }>(
      'SELECT status, draft_version_id, current_version_id FROM automations WHERE workspace_id = $1 AND id = $2 FOR UPDATE',
      { bind: [workspaceId, automationId], type: QueryTypes.SELECT, transaction },
    );
    if (!row) return { state: 'not-found' };
    if (row.status === 'archived') return { state: 'archived' };
    if (row.draft_version_id !== version.draftVersionId) return { state: 'draft-changed' };
    const publish = row.current_version_id !== row.draft_version_id;
    if (publish) {
      await db.query(
        `INSERT INTO automation_versions (id, workspace_id, automation_id, version, triggers, goal, graph, trigger_events, listens)
         SELECT $3, $1, $2, COALESCE(max(version), 0) + 1, $4::jsonb, $5::jsonb, $6::jsonb, $7::text[], $8::text[]
         FROM automation_versions WHERE automation_id = $2`,
        {
          bind: [
            workspaceId,
            automationId,
            version.draftVersionId,
            JSON.stringify(version.triggers),
            version.goal ? JSON.stringify(version.goal) : null,
            JSON.stringify(version.graph),
            version.triggerEvents,
            version.listens,
          ],
          transaction,
        },
      );
    }
    await db.query(
      `UPDATE automations SET status = 'active', current_version_id = draft_version_id, updated_at = now() WHERE workspace_id = $1 AND id = $2`,
      { bind: [workspaceId, automationId], transaction },
    );
    return { state: 'active', published: publish };
  });
}

export type StatusChange = { state: 'not-found' } | { state: 'refused'; status: AutomationStatus } | { state: 'changed' };

/** An active (or already paused) automation pauses: it enrolls nobody until activated again. */
export async function pauseAutomation(db: Sequelize, workspaceId: string, automationId: string): Promise<StatusChange> {
  const rows = await db.query<{ status: AutomationStatus; changed: boolean }>(
    `WITH target AS (SELECT id, status FROM automations WHERE workspace_id = $1 AND id = $2 FOR UPDATE),
     changed AS (
       UPDATE automations a SET status = 'paused', updated_at = now() FROM target
       WHERE a.id = target.id AND target.status IN ('active', 'paused') RETURNING a.id
     )
     SELECT target.status, EXISTS (SELECT 1 FROM changed) AS changed FROM target`,
    { bind: [workspaceId, automationId], type: QueryTypes.SELECT },
  );
  if (!rows[0]) return { state: 'not-found' };
  return rows[0].changed ? { state: 'changed' } : { state: 'refused', status: rows[0].status };
}

/**
 * Archives the automation and, in the same transaction, ends its active enrollments (`exited`,
 * `archived`) with one UPDATE: their workflows read the row at their next step and stop there, so an
 * archive of a large journey sends no storm of signals.
 */
export async function archiveAutomation(db: Sequelize, workspaceId: string, automationId: string): Promise<StatusChange & { exited?: number }> {
  return db.transaction(async (transaction) => {
    const [row] = await db.query<{ status: AutomationStatus }>('SELECT status FROM automations WHERE workspace_id = $1 AND id = $2 FOR UPDATE', {
      bind: [workspaceId, automationId],
      type: QueryTypes.SELECT,
      transaction,
    });
    if (!row) return { state: 'not-found' as const };
    if (row.status === 'archived') return { state: 'refused' as const, status: row.status };
    await db.query(`UPDATE automations SET status = 'archived', updated_at = now() WHERE workspace_id = $1 AND id = $2`, {
      bind: [workspaceId, automationId],
      transaction,
    });
    const exited = await db.query<{ id: string }>(
      `UPDATE enrollments SET status = 'exited', exit_reason = 'archived', exited_at = now()
       WHERE workspace_id = $1 AND automation_id = $2 AND status = 'active' RETURNING id`,
      { bind: [workspaceId, automationId], type: QueryTypes.SELECT, transaction },
    );
    return { state: 'changed' as const, exited: exited.length };
  });
}

/**
 * The active or paused automations whose published version sends with the template or attachment (the
 * API answers 409 to its delete, as it does for a campaign's template): deleting it would make every
 * enrollment skip that message. Drafts are checked again when they are activated.
 */
export async function automationsUsing(
  db: Sequelize,
  workspaceId: string,
  uses: { templateId: string } | { attachmentId: string },
  transaction?: Transaction,
): Promise<Array<{ id: string; name: string }>> {
  const [condition, id] =
    'templateId' in uses
      ? ['EXISTS (SELECT 1 FROM jsonb_each_text(node -> \'templateByChannel\') AS t WHERE t.value = $2)', uses.templateId]
      : ['COALESCE(node -> \'attachmentIds\', \'[]\') @> to_jsonb($2::text)', uses.attachmentId];
  return db.query<{ id: string; name: string }>(
    `SELECT a.id, a.name FROM automations a
     JOIN automation_versions v ON v.id = a.current_version_id
     WHERE a.workspace_id = $1 AND a.status IN ('active', 'paused')
       AND EXISTS (SELECT 1 FROM jsonb_array_elements(v.graph -> 'nodes') AS node WHERE node ->> 'type' = 'message' AND ${condition})
     ORDER BY a.created_at LIMIT 10`,
    { bind: [workspaceId, id], type: QueryTypes.SELECT, transaction },
  );
}

/**
 * The message nodes of live (active or paused) automations' current versions that attach this file, with
 * every attachment id each names: what a replaced file is checked against (25 MB per message).
 */
export async function liveNodesAttaching(
  db: Sequelize,
  workspaceId: string,
  attachmentId: string,
): Promise<Array<{ automationId: string; name: string; nodeId: string; attachmentIds: string[] }>> {
  const rows = await db.query<{ automation_id: string; name: string; node_id: string; attachment_ids: string[] }>(
    `SELECT a.id AS automation_id, a.name, node ->> 'id' AS node_id, node -> 'attachmentIds' AS attachment_ids
     FROM automations a
     JOIN automation_versions v ON v.id = a.current_version_id
     CROSS JOIN LATERAL jsonb_array_elements(v.graph -> 'nodes') AS node
     WHERE a.workspace_id = $1 AND a.status IN ('active', 'paused')
       AND node ->> 'type' = 'message' AND COALESCE(node -> 'attachmentIds', '[]') @> to_jsonb($2::text)
     ORDER BY a.created_at, node_id`,
    { bind: [workspaceId, attachmentId], type: QueryTypes.SELECT },
  );
  return rows.map((row) => ({ automationId: row.automation_id, name: row.name, nodeId: row.node_id, attachmentIds: row.attachment_ids }));
}
