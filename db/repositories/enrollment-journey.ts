import { QueryTypes, type Sequelize } from 'sequelize';

/**
 * What a contact's timeline (GET /contacts/:id/journey) shows of its journeys: each enrollment as the
 * moments it entered, stands now (while active) and exited (its messages are read with every other message
 * of the contact, contact-timeline.ts). Each read
 * is newest first, at most `limit`, and only before `before`, so the service merges pages of every kind.
 */

export type EnrollmentPhase = 'entered' | 'current' | 'exited';

export interface EnrollmentEntry {
  phase: EnrollmentPhase;
  at: Date;
  enrollmentId: string;
  automationId: string;
  automationName: string;
  status: 'active' | 'completed' | 'exited';
  /** `current` only: where the enrollment stands. */
  nodeId: string | null;
  nodeType: string | null;
  nodeLabel: string | null;
  /** `exited` only. */
  exitReason: string | null;
}

interface Page {
  limit: number;
  before?: Date;
}

export async function enrollmentEntries(db: Sequelize, workspaceId: string, contactId: string, page: Page): Promise<EnrollmentEntry[]> {
  const rows = await db.query<{
    phase: EnrollmentPhase;
    at: Date;
    id: string;
    automation_id: string;
    name: string;
    status: EnrollmentEntry['status'];
    current_node_id: string | null;
    current_node_type: string | null;
    current_node_label: string | null;
    exit_reason: string | null;
  }>(
    // One row per phase an enrollment has had: entered always, current while it is active and its workflow
    // has reached a node, exited once it ended. Served by enrollments_contact_idx.
    `SELECT p.phase, p.at, e.id, e.automation_id, a.name, e.status, e.current_node_id, e.current_node_type,
       e.current_node_label, e.exit_reason
     FROM enrollments e
     JOIN automations a ON a.workspace_id = e.workspace_id AND a.id = e.automation_id
     CROSS JOIN LATERAL (VALUES
       ('entered', e.entered_at),
       ('current', CASE WHEN e.status = 'active' AND e.current_node_id IS NOT NULL THEN COALESCE(e.current_since, e.entered_at) END),
       ('exited', CASE WHEN e.status <> 'active' THEN COALESCE(e.exited_at, e.entered_at) END)
     ) AS p (phase, at)
     WHERE e.workspace_id = $1 AND e.contact_id = $2 AND p.at IS NOT NULL AND ($3::timestamptz IS NULL OR p.at < $3)
     ORDER BY p.at DESC, e.id DESC, p.phase DESC
     LIMIT $4`,
    { bind: [workspaceId, contactId, page.before ?? null, page.limit], type: QueryTypes.SELECT },
  );
  return rows.map((row) => ({
    phase: row.phase,
    at: row.at,
    enrollmentId: row.id,
    automationId: row.automation_id,
    automationName: row.name,
    status: row.status,
    nodeId: row.phase === 'current' ? row.current_node_id : null,
    nodeType: row.phase === 'current' ? row.current_node_type : null,
    nodeLabel: row.phase === 'current' ? row.current_node_label : null,
    exitReason: row.phase === 'exited' ? row.exit_reason : null,
  }));
}
