import { randomUUID } from 'node:crypto';
import { QueryTypes, type Sequelize } from 'sequelize';
import type { AudienceRules } from '../../core/audience-rules';
import { inAudienceSession } from '../audience-session';
import { BindParams } from '../bind-params';
import { type AudienceQueryContext, audienceCondition, soleMembershipCount } from '../segment-query';

export interface SegmentRecord {
  id: string;
  name: string;
  kind: string;
  definition: AudienceRules;
  createdAt: Date;
  updatedAt: Date;
}

interface SegmentRow {
  id: string;
  name: string;
  kind: string;
  definition: AudienceRules;
  created_at: Date;
  updated_at: Date;
}

const toSegment = (row: SegmentRow): SegmentRecord => ({
  id: row.id,
  name: row.name,
  kind: row.kind,
  definition: row.definition,
  createdAt: row.created_at,
  updatedAt: row.updated_at,
});

export async function insertSegment(db: Sequelize, workspaceId: string, input: { name: string; definition: AudienceRules }): Promise<SegmentRecord> {
  const rows = await db.query<SegmentRow>(
    'INSERT INTO segments (id, workspace_id, name, definition) VALUES ($1, $2, $3, $4::jsonb) RETURNING *',
    { bind: [randomUUID(), workspaceId, input.name, JSON.stringify(input.definition)], type: QueryTypes.SELECT },
  );
  return toSegment(rows[0]);
}

export async function findSegment(db: Sequelize, workspaceId: string, segmentId: string): Promise<SegmentRecord | null> {
  const rows = await db.query<SegmentRow>('SELECT * FROM segments WHERE workspace_id = $1 AND id = $2', {
    bind: [workspaceId, segmentId],
    type: QueryTypes.SELECT,
  });
  return rows[0] ? toSegment(rows[0]) : null;
}

export async function listSegments(db: Sequelize, workspaceId: string): Promise<SegmentRecord[]> {
  const rows = await db.query<SegmentRow>('SELECT * FROM segments WHERE workspace_id = $1 ORDER BY created_at DESC, id DESC', {
    bind: [workspaceId],
    type: QueryTypes.SELECT,
  });
  return rows.map(toSegment);
}

export async function updateSegment(
  db: Sequelize,
  workspaceId: string,
  segmentId: string,
  change: { name?: string; definition?: AudienceRules },
): Promise<SegmentRecord | null> {
  const rows = await db.query<SegmentRow>(
    `UPDATE segments SET name = COALESCE($3, name), definition = COALESCE($4::jsonb, definition), updated_at = now()
     WHERE workspace_id = $1 AND id = $2 RETURNING *`,
    {
      bind: [workspaceId, segmentId, change.name ?? null, change.definition ? JSON.stringify(change.definition) : null],
      type: QueryTypes.SELECT,
    },
  );
  return rows[0] ? toSegment(rows[0]) : null;
}

export async function deleteSegment(db: Sequelize, workspaceId: string, segmentId: string): Promise<boolean> {
  const rows = await db.query('DELETE FROM segments WHERE workspace_id = $1 AND id = $2 RETURNING id', {
    bind: [workspaceId, segmentId],
    type: QueryTypes.SELECT,
  });
  return rows.length === 1;
}

export interface AudiencePreview {
  count: number;
  sample: Array<{ name: string | null; email: string | null }>;
}

const textAttribute = (key: string) =>
  `CASE WHEN jsonb_typeof(s.attributes -> '${key}') = 'string' THEN s.attributes ->> '${key}' END`;

/** The SQL of an audience: its condition over `contacts c`, and the count query a preview runs. */
export function audienceQueries(workspaceId: string, rules: AudienceRules, context: AudienceQueryContext) {
  const params = new BindParams();
  const workspace = params.add(workspaceId, 'uuid');
  const where = `c.workspace_id = ${workspace} AND ${audienceCondition(rules, context, params, workspace)}`;
  const membershipParams = new BindParams();
  const membershipCount = soleMembershipCount(rules, membershipParams);
  return {
    where,
    workspace,
    bind: params.values,
    count: membershipCount
      ? { sql: membershipCount, bind: membershipParams.values }
      : { sql: `SELECT count(*) AS count FROM contacts c WHERE ${where}`, bind: params.values },
  };
}

/**
 * Counts the contacts a rule tree matches and picks up to 5 of them. The count is exact. The sample is
 * whichever 5 matching contacts the plan reaches first, not the newest: ordering it would make a rare
 * or empty audience walk a million rows in date order just to find its 5.
 */
export async function previewAudience(
  db: Sequelize,
  workspaceId: string,
  rules: AudienceRules,
  context: AudienceQueryContext,
): Promise<AudiencePreview> {
  const { where, workspace, bind, count } = audienceQueries(workspaceId, rules, context);
  // Two connections at once: the sample of a rare audience can take as long as its count.
  const [counted, sample] = await Promise.all([
    inAudienceSession(db, (transaction) => db.query<{ count: string }>(count.sql, { bind: count.bind, type: QueryTypes.SELECT, transaction })),
    inAudienceSession(db, (transaction) =>
      db.query<{ name: string | null; email: string | null }>(
        `SELECT
           COALESCE(NULLIF(concat_ws(' ', ${textAttribute('firstName')}, ${textAttribute('lastName')}), ''), ${textAttribute('name')}) AS name,
           (SELECT i.address FROM contact_identities i WHERE i.workspace_id = ${workspace} AND i.contact_id = s.id AND i.channel = 'email'
            ORDER BY i.is_primary DESC, i.created_at LIMIT 1) AS email
         FROM (SELECT c.id, c.attributes FROM contacts c WHERE ${where} LIMIT 5) s`,
        { bind, type: QueryTypes.SELECT, transaction },
      ),
    ),
  ]);
  return { count: Number(counted[0].count), sample };
}

/**
 * Whether one stored contact matches the rules now (a journey's branch, a simulated one): the segment SQL
 * narrowed to that contact.
 */
export async function contactMatchesRules(
  db: Sequelize,
  workspaceId: string,
  contactId: string,
  rules: AudienceRules,
  context: AudienceQueryContext,
): Promise<boolean> {
  const params = new BindParams();
  const workspace = params.add(workspaceId, 'uuid');
  const contact = params.add(contactId, 'uuid');
  const condition = audienceCondition(rules, context, params, workspace);
  const rows = await inAudienceSession(db, (transaction) =>
    db.query<{ matches: boolean }>(
      `SELECT EXISTS (SELECT 1 FROM contacts c WHERE c.workspace_id = ${workspace} AND c.id = ${contact} AND ${condition}) AS matches`,
      { bind: params.values, type: QueryTypes.SELECT, transaction },
    ),
  );
  return rows[0].matches;
}
