import { QueryTypes, type Sequelize } from 'sequelize';
import type { AudienceRules } from '../../core/audience-rules';
import type { EnrollAudience } from '../../core/journeys/enrollment';
import { inAudienceSession } from '../audience-session';
import { BindParams } from '../bind-params';
import { audienceCondition } from '../segment-query';
import { resolveAudience } from './campaign-audience';

/**
 * The next page of an enroll request's audience: contact ids after `cursor` in id order, so a page
 * repeated after a retry or a continue-as-new is the same page. A list's members and a segment's rules
 * are read as campaigns read them (db/repositories/campaign-audience.ts), evaluated at each page: a
 * contact who joins a segment while it is being enrolled is enrolled if its id is still ahead.
 * Unlike a campaign's, the audience is not narrowed to contacts with a reachable email: a journey's
 * message nodes pick their channel per contact. `missing` when the list or segment was deleted.
 */
export async function audiencePage(
  db: Sequelize,
  workspaceId: string,
  audience: EnrollAudience,
  page: { cursor: string | null; limit: number; now: Date },
): Promise<{ contactIds: string[] } | { missing: 'list' | 'segment' }> {
  const params = new BindParams();
  const workspace = params.add(workspaceId, 'uuid');
  let condition: string;
  if ('contactIds' in audience) {
    condition = `c.id = ANY(${params.add(audience.contactIds, 'uuid[]')})`;
  } else {
    const resolved = await resolveAudience(db, workspaceId, { listId: 'listId' in audience ? audience.listId : null, segmentId: 'segmentId' in audience ? audience.segmentId : null }, page.now);
    if ('missing' in resolved) return { missing: resolved.missing === 'segment' ? 'segment' : 'list' };
    condition = audienceCondition(resolved.rules as AudienceRules, resolved.context, params, workspace);
  }
  const after = params.add(page.cursor, 'uuid');
  const limit = params.add(page.limit, 'integer');
  const rows = await inAudienceSession(db, (transaction) =>
    db.query<{ id: string }>(
      `SELECT c.id FROM contacts c WHERE c.workspace_id = ${workspace} AND (${after} IS NULL OR c.id > ${after}) AND ${condition} ORDER BY c.id LIMIT ${limit}`,
      { bind: params.values, type: QueryTypes.SELECT, transaction },
    ),
  );
  return { contactIds: rows.map((row) => row.id) };
}
