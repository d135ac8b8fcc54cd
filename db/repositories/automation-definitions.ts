import { QueryTypes, type Sequelize } from 'sequelize';
import type { AudienceRules } from '../../core/audience-rules';
import type { FieldDefinition } from '../../core/custom-fields';
import type { Channel } from '../../core/identities';
import type { RecentSend } from '../../core/journeys/delivery-window';
import type { EventMatch, JourneyGraph } from '../../core/journeys/graph';
import { inAudienceSession } from '../audience-session';
import { BindParams } from '../bind-params';
import { audienceCondition } from '../segment-query';

/**
 * What a simulation reads of an automation (db/migrations/0020-automations.ts): the draft being edited
 * and the published version new enrollments take, the workspace's journey settings, and the contact's
 * recent marketing messages the frequency caps count. Reads only: a simulation writes nothing.
 */

export interface PublishedVersion {
  id: string;
  version: number;
  goal: EventMatch | null;
  /** Normalized at publication (durations in milliseconds). */
  graph: JourneyGraph;
}

export interface AutomationDefinition {
  id: string;
  name: string;
  status: 'draft' | 'active' | 'paused' | 'archived';
  /** As the API stored it: `{ triggers, goal, graph }` in their input shape (core/journeys/graph-schema.ts). */
  draft: unknown;
  draftVersionId: string;
  current: PublishedVersion | null;
}

interface DefinitionRow {
  id: string;
  name: string;
  status: AutomationDefinition['status'];
  draft: unknown;
  draft_version_id: string;
  version_id: string | null;
  version: number | null;
  goal: EventMatch | null;
  graph: JourneyGraph | null;
}

export async function findAutomationDefinition(db: Sequelize, workspaceId: string, automationId: string): Promise<AutomationDefinition | null> {
  const rows = await db.query<DefinitionRow>(
    `SELECT a.id, a.name, a.status, a.draft, a.draft_version_id, v.id AS version_id, v.version, v.goal, v.graph
     FROM automations a LEFT JOIN automation_versions v ON v.id = a.current_version_id
     WHERE a.workspace_id = $1 AND a.id = $2`,
    { bind: [workspaceId, automationId], type: QueryTypes.SELECT },
  );
  const row = rows[0];
  if (!row) return null;
  return {
    id: row.id,
    name: row.name,
    status: row.status,
    draft: row.draft,
    draftVersionId: row.draft_version_id,
    current:
      row.version_id !== null && row.version !== null && row.graph !== null
        ? { id: row.version_id, version: row.version, goal: row.goal, graph: row.graph }
        : null,
  };
}

/**
 * The contact's marketing messages (campaign and journey; transactional ones are exempt from caps) created
 * in (since, until]: what a frequency cap counts. Served by messages_contact_recent_idx.
 */
export async function recentMarketingSends(db: Sequelize, workspaceId: string, contactId: string, since: Date, until: Date): Promise<RecentSend[]> {
  const rows = await db.query<{ channel: Channel; created_at: Date }>(
    `SELECT channel, created_at FROM messages
     WHERE workspace_id = $1 AND contact_id = $2 AND kind <> 'transactional' AND created_at > $3 AND created_at <= $4`,
    { bind: [workspaceId, contactId, since, until], type: QueryTypes.SELECT },
  );
  return rows.map((row) => ({ channel: row.channel, at: row.created_at }));
}

/** Whether one stored contact matches the rules now, with the segment SQL (db/segment-query.ts). */
export async function contactMatchesRules(
  db: Sequelize,
  workspaceId: string,
  contactId: string,
  rules: AudienceRules,
  fields: ReadonlyMap<string, FieldDefinition>,
  now: Date,
): Promise<boolean> {
  const params = new BindParams();
  const workspace = params.add(workspaceId, 'uuid');
  const contact = params.add(contactId, 'uuid');
  const condition = audienceCondition(rules, { fields, now }, params, workspace);
  const rows = await inAudienceSession(db, (transaction) =>
    db.query<{ matches: boolean }>(
      `SELECT EXISTS (SELECT 1 FROM contacts c WHERE c.workspace_id = ${workspace} AND c.id = ${contact} AND ${condition}) AS matches`,
      { bind: params.values, type: QueryTypes.SELECT, transaction },
    ),
  );
  return rows[0].matches;
}
