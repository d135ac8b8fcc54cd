import { QueryTypes, type Sequelize } from 'sequelize';
import type { EventMatch, JourneyGraph } from '../../core/journeys/graph';

export type EnrollmentStatus = 'active' | 'completed' | 'exited';
export type EnrollmentSource = 'event' | 'list' | 'segment' | 'contacts';

export interface EnrollmentRecord {
  id: string;
  workspaceId: string;
  automationId: string;
  contactId: string;
  version: number;
  versionId: string;
  status: EnrollmentStatus;
  source: EnrollmentSource;
  currentNodeId: string | null;
  currentNodeType: string | null;
  currentNodeLabel: string | null;
  exitReason: string | null;
  enteredAt: Date;
  exitedAt: Date | null;
}

interface EnrollmentRow {
  id: string;
  workspace_id: string;
  automation_id: string;
  contact_id: string;
  version: number;
  version_id: string;
  status: EnrollmentStatus;
  source: EnrollmentSource;
  current_node_id: string | null;
  current_node_type: string | null;
  current_node_label: string | null;
  exit_reason: string | null;
  entered_at: Date;
  exited_at: Date | null;
}

const toEnrollment = (row: EnrollmentRow): EnrollmentRecord => ({
  id: row.id,
  workspaceId: row.workspace_id,
  automationId: row.automation_id,
  contactId: row.contact_id,
  version: row.version,
  versionId: row.version_id,
  status: row.status,
  source: row.source,
  currentNodeId: row.current_node_id,
  currentNodeType: row.current_node_type,
  currentNodeLabel: row.current_node_label,
  exitReason: row.exit_reason,
  enteredAt: row.entered_at,
  exitedAt: row.exited_at,
});

const SELECT_ENROLLMENT = 'SELECT e.*, v.version FROM enrollments e JOIN automation_versions v ON v.id = e.version_id';

/** What starting an enrollment's journey needs (temporal/journeys.ts `startEnrollmentWorkflow`). */
export interface NewEnrollment {
  workspaceId: string;
  enrollmentId: string;
  automationId: string;
  contactId: string;
}

/**
 * Enrolls these contacts of the workspace in the automation's current version, if the automation is
 * active (null otherwise: a paused or archived automation enrolls nobody). Contacts that are not the
 * workspace's are skipped; one already active in it is skipped by the one-active index (ON CONFLICT DO
 * NOTHING), so a repeated page enrolls nobody twice. Answers the new rows.
 */
export async function enrollContacts(
  db: Sequelize,
  workspaceId: string,
  automationId: string,
  contactIds: readonly string[],
  source: Exclude<EnrollmentSource, 'event'>,
): Promise<NewEnrollment[] | null> {
  const rows = await db.query<{ active: boolean; id: string | null; contact_id: string | null }>(
    `WITH automation AS (
       SELECT id, current_version_id FROM automations WHERE workspace_id = $1 AND id = $2 AND status = 'active' AND current_version_id IS NOT NULL
     ),
     inserted AS (
       INSERT INTO enrollments (id, workspace_id, automation_id, version_id, contact_id, source)
       SELECT gen_random_uuid(), $1, a.id, a.current_version_id, c.id, $4
       FROM automation a JOIN contacts c ON c.workspace_id = $1 AND c.id = ANY($3::uuid[])
       ORDER BY c.id
       ON CONFLICT DO NOTHING
       RETURNING id, contact_id
     )
     SELECT true AS active, i.id, i.contact_id FROM automation LEFT JOIN inserted i ON true`,
    { bind: [workspaceId, automationId, contactIds, source], type: QueryTypes.SELECT },
  );
  if (rows.length === 0) return null;
  return rows.filter((row) => row.id !== null).map((row) => ({ workspaceId, automationId, enrollmentId: row.id as string, contactId: row.contact_id as string }));
}

/** An active automation whose current version a triggering event may enroll into. */
export interface TriggerCandidate {
  automationId: string;
  versionId: string;
  triggers: EventMatch[];
}

/** Active automations whose current version is triggered by an event of this name (its `match` is checked by the caller). */
export async function triggerCandidates(db: Sequelize, workspaceId: string, eventName: string): Promise<TriggerCandidate[]> {
  const rows = await db.query<{ automation_id: string; version_id: string; triggers: EventMatch[] }>(
    `SELECT a.id AS automation_id, v.id AS version_id, v.triggers
     FROM automations a JOIN automation_versions v ON v.id = a.current_version_id
     WHERE a.workspace_id = $1 AND a.status = 'active' AND v.trigger_events @> ARRAY[$2::text]`,
    { bind: [workspaceId, eventName], type: QueryTypes.SELECT },
  );
  return rows.map((row) => ({ automationId: row.automation_id, versionId: row.version_id, triggers: row.triggers }));
}

/**
 * Enrolls the event's contact in the versions its trigger matched. The one-active index skips a contact
 * already in the journey, the trigger index an event processed before (a retry, the sweeper). Answers
 * how many were new.
 */
export async function enrollByEvent(
  db: Sequelize,
  workspaceId: string,
  event: { id: string; contactId: string },
  versions: ReadonlyArray<{ automationId: string; versionId: string }>,
): Promise<number> {
  if (versions.length === 0) return 0;
  const inserted = await db.query<{ id: string }>(
    `INSERT INTO enrollments (id, workspace_id, automation_id, version_id, contact_id, source, trigger_event_id)
     SELECT gen_random_uuid(), $1, t.automation_id, t.version_id, $2, 'event', $3
     FROM unnest($4::uuid[], $5::uuid[]) AS t (automation_id, version_id)
     ON CONFLICT DO NOTHING RETURNING id`,
    {
      bind: [workspaceId, event.contactId, event.id, versions.map((v) => v.automationId), versions.map((v) => v.versionId)],
      type: QueryTypes.SELECT,
    },
  );
  return inserted.length;
}

/** An enrollment whose journey was not yet started, with the event that triggered it, if any. */
export interface UnstartedEnrollment extends NewEnrollment {
  /** Ids and name only: the journey is started with them, and its history never holds the properties. */
  triggerEvent: { id: string; name: string; occurredAt: Date } | null;
}

interface UnstartedRow {
  id: string;
  workspace_id: string;
  automation_id: string;
  contact_id: string;
  event_id: string | null;
  event_name: string | null;
  event_occurred_at: Date | null;
}

const UNSTARTED_SELECT = `
  SELECT e.id, e.workspace_id, e.automation_id, e.contact_id,
    ev.id AS event_id, ev.name AS event_name, ev.occurred_at AS event_occurred_at
  FROM enrollments e LEFT JOIN contact_events ev ON ev.workspace_id = e.workspace_id AND ev.id = e.trigger_event_id`;

const toUnstarted = (row: UnstartedRow): UnstartedEnrollment => ({
  workspaceId: row.workspace_id,
  enrollmentId: row.id,
  automationId: row.automation_id,
  contactId: row.contact_id,
  triggerEvent:
    row.event_id === null
      ? null
      : { id: row.event_id, name: row.event_name as string, occurredAt: row.event_occurred_at as Date },
});

/**
 * The enrollments an event created in these automations whose journey has not started yet (this
 * request's, or an earlier attempt's). By automation and event, so enrollments_trigger_idx serves it.
 */
export async function unstartedOfEvent(db: Sequelize, workspaceId: string, eventId: string, automationIds: readonly string[]): Promise<UnstartedEnrollment[]> {
  if (automationIds.length === 0) return [];
  const rows = await db.query<UnstartedRow>(
    `${UNSTARTED_SELECT} WHERE e.automation_id = ANY($3::uuid[]) AND e.trigger_event_id = $2 AND e.workspace_id = $1
       AND e.started_at IS NULL AND e.status = 'active'`,
    { bind: [workspaceId, eventId, automationIds], type: QueryTypes.SELECT },
  );
  return rows.map(toUnstarted);
}

/**
 * The enrollment outbox (enrollments_unstarted_idx): active enrollments whose journey was not known to
 * start, entered before `enteredBefore` (younger ones are still being started by their request), oldest first.
 */
export async function unstartedEnrollments(db: Sequelize, page: { enteredBefore: Date; limit: number }): Promise<UnstartedEnrollment[]> {
  const rows = await db.query<UnstartedRow>(
    `${UNSTARTED_SELECT} WHERE e.started_at IS NULL AND e.status = 'active' AND e.entered_at < $1 ORDER BY e.entered_at LIMIT $2`,
    { bind: [page.enteredBefore, page.limit], type: QueryTypes.SELECT },
  );
  return rows.map(toUnstarted);
}

/** Records that these enrollments' journeys run: they leave the outbox. */
export async function markEnrollmentsStarted(db: Sequelize, enrollmentIds: readonly string[]): Promise<void> {
  if (enrollmentIds.length === 0) return;
  await db.query('UPDATE enrollments SET started_at = now() WHERE id = ANY($1::uuid[]) AND started_at IS NULL', { bind: [enrollmentIds] });
}

/** A running enrollment of the contact that reacts to an event name, with its version's goal and graph. */
export interface ListeningEnrollment {
  enrollmentId: string;
  goal: EventMatch | null;
  graph: JourneyGraph;
}

/**
 * The contact's active enrollments whose version listens to this event name (its goal or a
 * wait_for_event), except the ones this very event triggered (they receive it with their start).
 */
export async function listeningEnrollments(
  db: Sequelize,
  workspaceId: string,
  contactId: string,
  event: { id: string; name: string },
): Promise<ListeningEnrollment[]> {
  const rows = await db.query<{ id: string; goal: EventMatch | null; graph: JourneyGraph }>(
    `SELECT e.id, v.goal, v.graph FROM enrollments e JOIN automation_versions v ON v.id = e.version_id
     WHERE e.workspace_id = $1 AND e.contact_id = $2 AND e.status = 'active' AND v.listens @> ARRAY[$3::text]
       AND e.trigger_event_id IS DISTINCT FROM $4::uuid`,
    { bind: [workspaceId, contactId, event.name, event.id], type: QueryTypes.SELECT },
  );
  return rows.map((row) => ({ enrollmentId: row.id, goal: row.goal, graph: row.graph }));
}

export async function findEnrollment(db: Sequelize, workspaceId: string, automationId: string, enrollmentId: string): Promise<EnrollmentRecord | null> {
  const rows = await db.query<EnrollmentRow>(`${SELECT_ENROLLMENT} WHERE e.workspace_id = $1 AND e.automation_id = $2 AND e.id = $3`, {
    bind: [workspaceId, automationId, enrollmentId],
    type: QueryTypes.SELECT,
  });
  return rows[0] ? toEnrollment(rows[0]) : null;
}

export async function listEnrollments(
  db: Sequelize,
  workspaceId: string,
  automationId: string,
  page: { status?: EnrollmentStatus; limit: number; offset: number },
): Promise<{ rows: EnrollmentRecord[]; total: number }> {
  const where = 'e.workspace_id = $1 AND e.automation_id = $2 AND ($3::text IS NULL OR e.status = $3)';
  const [rows, counted] = await Promise.all([
    db.query<EnrollmentRow>(`${SELECT_ENROLLMENT} WHERE ${where} ORDER BY e.entered_at DESC, e.id DESC LIMIT $4 OFFSET $5`, {
      bind: [workspaceId, automationId, page.status ?? null, page.limit, page.offset],
      type: QueryTypes.SELECT,
    }),
    db.query<{ total: string }>(`SELECT count(*) AS total FROM enrollments e WHERE ${where}`, {
      bind: [workspaceId, automationId, page.status ?? null],
      type: QueryTypes.SELECT,
    }),
  ]);
  return { rows: rows.map(toEnrollment), total: Number(counted[0].total) };
}

export type EnrollmentExit = { state: 'not-found' } | { state: 'ended'; status: EnrollmentStatus } | { state: 'exited'; enrollment: EnrollmentRecord };

/** Ends an active enrollment (`exited` with the reason); the database is the truth the journey reads at its next step. */
export async function exitEnrollment(db: Sequelize, workspaceId: string, automationId: string, enrollmentId: string, reason: 'manual'): Promise<EnrollmentExit> {
  const changed = await db.query<{ id: string }>(
    `UPDATE enrollments SET status = 'exited', exit_reason = $4, exited_at = now()
     WHERE workspace_id = $1 AND automation_id = $2 AND id = $3 AND status = 'active' RETURNING id`,
    { bind: [workspaceId, automationId, enrollmentId, reason], type: QueryTypes.SELECT },
  );
  const enrollment = await findEnrollment(db, workspaceId, automationId, enrollmentId);
  if (!enrollment) return { state: 'not-found' };
  return changed.length > 0 ? { state: 'exited', enrollment } : { state: 'ended', status: enrollment.status };
}
