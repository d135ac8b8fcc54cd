import { QueryTypes, type Sequelize } from 'sequelize';

/**
 * Clicks grouped by link (the canonical URL: without utm_* and trailing slash). Counts are of human clicks;
 * machine clicks (scanners, prefetchers) are reported beside them, never counted. The honeypot is left out.
 */
export interface LinkClicks {
  /** The raw variant clicked most (by people; by anyone when no person clicked). */
  url: string;
  canonicalUrl: string;
  role: string | null;
  uniqueClicks: number;
  totalClicks: number;
  machineClicks: number;
  firstClickAt: Date | null;
  lastClickAt: Date | null;
}

interface LinkClicksRow {
  url: string;
  canonical_url: string;
  role: string | null;
  unique_clicks: string;
  total_clicks: string;
  machine_clicks: string;
  first_click_at: Date | null;
  last_click_at: Date | null;
}

const GROUPED = `
  SELECT l.canonical_url,
    COALESCE(mode() WITHIN GROUP (ORDER BY e.link_url) FILTER (WHERE e.classification = 'human'), mode() WITHIN GROUP (ORDER BY e.link_url)) AS url,
    mode() WITHIN GROUP (ORDER BY l.role) AS role,
    count(DISTINCT e.message_id) FILTER (WHERE e.classification = 'human') AS unique_clicks,
    count(*) FILTER (WHERE e.classification = 'human') AS total_clicks,
    count(*) FILTER (WHERE e.classification <> 'human') AS machine_clicks,
    min(e.created_at) FILTER (WHERE e.classification = 'human') AS first_click_at,
    max(e.created_at) FILTER (WHERE e.classification = 'human') AS last_click_at
  FROM message_events e
  JOIN message_links l ON l.message_id = e.message_id AND l.link_id = e.link_id AND NOT l.honeypot`;

function toLinkClicks(row: LinkClicksRow): LinkClicks {
  return {
    url: row.url,
    canonicalUrl: row.canonical_url,
    role: row.role,
    uniqueClicks: Number(row.unique_clicks),
    totalClicks: Number(row.total_clicks),
    machineClicks: Number(row.machine_clicks),
    firstClickAt: row.first_click_at,
    lastClickAt: row.last_click_at,
  };
}

export interface LinkStatsScope {
  from?: Date;
  until?: Date;
  campaignId?: string;
  /** The messages of one automation's journeys (messages.automation_id). */
  automationId?: string;
}

/** A workspace's links over a period (and one campaign's or automation's, when named), most unique clicks first. */
export async function linkStats(db: Sequelize, workspaceId: string, scope: LinkStatsScope, limit = 500): Promise<LinkClicks[]> {
  const where = [`e.workspace_id = $1`, `e.type = 'click'`];
  const bind: unknown[] = [workspaceId];
  const add = (clause: (placeholder: string) => string, value: unknown) => {
    bind.push(value);
    where.push(clause(`$${bind.length}`));
  };
  if (scope.from) add((p) => `e.created_at >= ${p}`, scope.from);
  if (scope.until) add((p) => `e.created_at < ${p}`, scope.until);
  if (scope.campaignId) add((p) => `EXISTS (SELECT 1 FROM messages m WHERE m.id = e.message_id AND m.campaign_id = ${p})`, scope.campaignId);
  if (scope.automationId) add((p) => `EXISTS (SELECT 1 FROM messages m WHERE m.id = e.message_id AND m.automation_id = ${p})`, scope.automationId);
  const rows = await db.query<LinkClicksRow>(
    `${GROUPED} WHERE ${where.join(' AND ')}
     GROUP BY l.canonical_url ORDER BY unique_clicks DESC, total_clicks DESC, l.canonical_url LIMIT ${Number(limit)}`,
    { bind, type: QueryTypes.SELECT },
  );
  return rows.map(toLinkClicks);
}

/** One message's clicked links (EmailClickedLink): human clicks only, as its engagement counts them. */
export async function messageClickedLinks(db: Sequelize, workspaceId: string, messageId: string): Promise<LinkClicks[]> {
  const rows = await db.query<LinkClicksRow>(
    `${GROUPED} WHERE e.workspace_id = $1 AND e.message_id = $2 AND e.type = 'click' AND e.classification = 'human'
     GROUP BY l.canonical_url ORDER BY last_click_at DESC`,
    { bind: [workspaceId, messageId], type: QueryTypes.SELECT },
  );
  return rows.map(toLinkClicks);
}
