import { QueryTypes, type Sequelize } from 'sequelize';

/**
 * Message steps a journey skipped at run time (journey_skips), and the automation's per-node counters
 * (journey_node_counts). The journey's Temporal history is for operators; these rows are what the API
 * shows a user: the contact's journey, the enrollment list and the automation's stats.
 */

export interface JourneySkip {
  enrollmentId: string;
  nodeId: string;
  nodeLabel: string;
  reason: string;
  at: Date;
}

export interface ContactSkip extends JourneySkip {
  automationId: string;
  automationName: string;
}

/**
 * Records that an enrollment's message node was skipped, and counts it on the node, in one statement:
 * the count moves only when the row is new, so a retried activity counts once. An enrollment already
 * deleted (its contact or automation went) records nothing. Answers whether the skip was new.
 */
export async function recordSkip(
  db: Sequelize,
  workspaceId: string,
  skip: { enrollmentId: string; nodeId: string; nodeLabel: string; reason: string; at: Date },
): Promise<boolean> {
  const rows = await db.query(
    `WITH skipped AS (
       INSERT INTO journey_skips (workspace_id, enrollment_id, node_id, automation_id, contact_id, node_label, reason, skipped_at)
       SELECT e.workspace_id, e.id, $3, e.automation_id, e.contact_id, $4, $5, $6
       FROM enrollments e WHERE e.workspace_id = $1 AND e.id = $2
       ON CONFLICT (workspace_id, enrollment_id, node_id) DO NOTHING
       RETURNING workspace_id, automation_id, node_id, reason
     ), counted AS (
       INSERT INTO journey_node_counts (workspace_id, automation_id, node_id, outcome, count)
       SELECT workspace_id, automation_id, node_id, 'skipped:' || reason, 1 FROM skipped
       ON CONFLICT (workspace_id, automation_id, node_id, outcome) DO UPDATE SET count = journey_node_counts.count + 1
     )
     SELECT node_id FROM skipped`,
    { bind: [workspaceId, skip.enrollmentId, skip.nodeId, skip.nodeLabel, skip.reason, skip.at], type: QueryTypes.SELECT },
  );
  return rows.length === 1;
}

/** The skipped steps of these enrollments (a page of the enrollment list), oldest first per enrollment. */
export async function skipsOfEnrollments(db: Sequelize, workspaceId: string, enrollmentIds: readonly string[]): Promise<Map<string, JourneySkip[]>> {
  const byEnrollment = new Map<string, JourneySkip[]>();
  if (enrollmentIds.length === 0) return byEnrollment;
  const rows = await db.query<{ enrollment_id: string; node_id: string; node_label: string; reason: string; skipped_at: Date }>(
    `SELECT enrollment_id, node_id, node_label, reason, skipped_at FROM journey_skips
     WHERE workspace_id = $1 AND enrollment_id = ANY($2::uuid[]) ORDER BY skipped_at, node_id`,
    { bind: [workspaceId, enrollmentIds], type: QueryTypes.SELECT },
  );
  for (const row of rows) {
    const skips = byEnrollment.get(row.enrollment_id) ?? [];
    skips.push({ enrollmentId: row.enrollment_id, nodeId: row.node_id, nodeLabel: row.node_label, reason: row.reason, at: row.skipped_at });
    byEnrollment.set(row.enrollment_id, skips);
  }
  return byEnrollment;
}

/** The contact's skipped steps, newest first, at most `limit`, before `before` (journey_skips_contact_idx). */
export async function skipsOfContact(db: Sequelize, workspaceId: string, contactId: string, page: { limit: number; before?: Date }): Promise<ContactSkip[]> {
  const rows = await db.query<{ enrollment_id: string; node_id: string; node_label: string; reason: string; skipped_at: Date; automation_id: string; name: string }>(
    `SELECT s.enrollment_id, s.node_id, s.node_label, s.reason, s.skipped_at, s.automation_id, a.name
     FROM journey_skips s JOIN automations a ON a.workspace_id = s.workspace_id AND a.id = s.automation_id
     WHERE s.workspace_id = $1 AND s.contact_id = $2 AND ($3::timestamptz IS NULL OR s.skipped_at < $3)
     ORDER BY s.skipped_at DESC, s.enrollment_id DESC LIMIT $4`,
    { bind: [workspaceId, contactId, page.before ?? null, page.limit], type: QueryTypes.SELECT },
  );
  return rows.map((row) => ({
    enrollmentId: row.enrollment_id,
    nodeId: row.node_id,
    nodeLabel: row.node_label,
    reason: row.reason,
    at: row.skipped_at,
    automationId: row.automation_id,
    automationName: row.name,
  }));
}

export interface NodeCounts {
  nodeId: string;
  skipped: number;
  skippedByReason: Record<string, number>;
}

/** The automation's counters per node (journey_node_counts), in node id order. */
export async function nodeCountsOf(db: Sequelize, workspaceId: string, automationId: string): Promise<NodeCounts[]> {
  const rows = await db.query<{ node_id: string; outcome: string; count: string }>(
    'SELECT node_id, outcome, count FROM journey_node_counts WHERE workspace_id = $1 AND automation_id = $2 ORDER BY node_id, outcome',
    { bind: [workspaceId, automationId], type: QueryTypes.SELECT },
  );
  const byNode = new Map<string, NodeCounts>();
  for (const row of rows) {
    const node = byNode.get(row.node_id) ?? { nodeId: row.node_id, skipped: 0, skippedByReason: {} };
    const reason = row.outcome.startsWith('skipped:') ? row.outcome.slice('skipped:'.length) : null;
    if (reason !== null) {
      node.skipped += Number(row.count);
      node.skippedByReason[reason] = Number(row.count);
    }
    byNode.set(row.node_id, node);
  }
  return [...byNode.values()];
}
