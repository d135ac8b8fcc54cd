import { QueryTypes, type Sequelize } from 'sequelize';
import type { EventMatch, JourneyGraph, NodeType } from '../../core/journeys/graph';

/**
 * Where an enrollment stands, as its journey workflow reads and writes it: the enrollment with the
 * version pinned when it entered, its current node (the contact's journey timeline shows it), and its end.
 * Every write is guarded by `status = 'active'`, so an enrollment another writer ended (an exit through
 * the API, an archive) is never moved on or ended twice.
 */

export type EnrollmentStatus = 'active' | 'completed' | 'exited';

export interface LoadedJourney {
  automationId: string;
  versionId: string;
  contactId: string;
  status: EnrollmentStatus;
  /** The event that enrolled the contact (its signal starts the journey), if an event did. */
  triggerEventId: string | null;
  graph: JourneyGraph;
  goal: EventMatch | null;
}

/** A new journey as it enters: loaded, and whether its entry node was recorded (false: the enrollment had ended). */
export type EnteredJourney = LoadedJourney & { entered: boolean };

export async function loadEnrollment(db: Sequelize, workspaceId: string, enrollmentId: string): Promise<LoadedJourney | null> {
  const [row] = await db.query<{ automation_id: string; version_id: string; contact_id: string; status: EnrollmentStatus; trigger_event_id: string | null; graph: JourneyGraph; goal: EventMatch | null }>(
    `SELECT e.automation_id, e.version_id, e.contact_id, e.status, e.trigger_event_id, v.graph, v.goal
     FROM enrollments e JOIN automation_versions v ON v.id = e.version_id
     WHERE e.workspace_id = $1 AND e.id = $2`,
    { bind: [workspaceId, enrollmentId], type: QueryTypes.SELECT },
  );
  if (!row) return null;
  return { automationId: row.automation_id, versionId: row.version_id, contactId: row.contact_id, status: row.status, triggerEventId: row.trigger_event_id, graph: row.graph, goal: row.goal };
}

export interface JourneyStep {
  nodeId: string;
  nodeType: NodeType;
  label: string;
}

/**
 * Records the node an active enrollment is at now (and marks it started: its workflow runs). Answers
 * whether the enrollment is still active.
 */
export async function recordStep(db: Sequelize, workspaceId: string, enrollmentId: string, step: JourneyStep, at: Date): Promise<boolean> {
  const rows = await db.query(
    `UPDATE enrollments SET current_node_id = $3, current_node_type = $4, current_node_label = $5, current_since = $6,
       started_at = COALESCE(started_at, $6)
     WHERE workspace_id = $1 AND id = $2 AND status = 'active'
     RETURNING id`,
    { bind: [workspaceId, enrollmentId, step.nodeId, step.nodeType, step.label, at], type: QueryTypes.SELECT },
  );
  return rows.length === 1;
}

/** Ends an active enrollment; false when it had already ended. */
export async function finishEnrollment(db: Sequelize, workspaceId: string, enrollmentId: string, end: { status: 'completed' | 'exited'; reason: string }, at: Date): Promise<boolean> {
  const rows = await db.query(
    `UPDATE enrollments SET status = $3, exit_reason = $4, exited_at = $5
     WHERE workspace_id = $1 AND id = $2 AND status = 'active'
     RETURNING id`,
    { bind: [workspaceId, enrollmentId, end.status, end.reason, at], type: QueryTypes.SELECT },
  );
  return rows.length === 1;
}

/** The automation's status and name, for a journey message (a paused automation holds its messages). */
export async function automationOf(db: Sequelize, workspaceId: string, automationId: string): Promise<{ status: string; name: string } | null> {
  const [row] = await db.query<{ status: string; name: string }>('SELECT status, name FROM automations WHERE workspace_id = $1 AND id = $2', {
    bind: [workspaceId, automationId],
    type: QueryTypes.SELECT,
  });
  return row ?? null;
}
