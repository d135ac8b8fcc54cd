import { QueryTypes, type Sequelize, type Transaction } from 'sequelize';
import { type CampaignCounters, NO_COUNTS } from '../../core/campaign-metrics';

/** The sum over a campaign's counter shards, as SQL columns (migration 0014 keeps the shards). */
export const SUMMED_COUNTERS = `sum(sent) AS sent, sum(delivered) AS delivered, sum(hard_bounces) AS hard_bounces,
  sum(soft_bounces) AS soft_bounces, sum(complaints) AS complaints, sum(unsubscribes) AS unsubscribes, sum(failed) AS failed,
  sum(opens) AS opens, sum(clicks) AS clicks, sum(content_clicks) AS content_clicks, sum(unique_opens) AS unique_opens,
  sum(unique_clicks) AS unique_clicks`;

export interface SummedRow {
  sent: string | null;
  delivered: string | null;
  hard_bounces: string | null;
  soft_bounces: string | null;
  complaints: string | null;
  unsubscribes: string | null;
  failed: string | null;
  opens: string | null;
  clicks: string | null;
  content_clicks: string | null;
  unique_opens: string | null;
  unique_clicks: string | null;
}

export function toCounters(row: SummedRow): CampaignCounters {
  return {
    sent: Number(row.sent ?? 0),
    delivered: Number(row.delivered ?? 0),
    hardBounces: Number(row.hard_bounces ?? 0),
    softBounces: Number(row.soft_bounces ?? 0),
    complaints: Number(row.complaints ?? 0),
    unsubscribes: Number(row.unsubscribes ?? 0),
    failed: Number(row.failed ?? 0),
    opens: Number(row.opens ?? 0),
    clicks: Number(row.clicks ?? 0),
    contentClicks: Number(row.content_clicks ?? 0),
    uniqueOpens: Number(row.unique_opens ?? 0),
    uniqueClicks: Number(row.unique_clicks ?? 0),
  };
}

/** The counters of campaigns of the workspace, by campaign; a campaign nothing happened to yet has zeros. */
export async function campaignCounters(
  db: Sequelize,
  workspaceId: string,
  campaignIds: readonly string[],
  transaction?: Transaction,
): Promise<Map<string, CampaignCounters>> {
  const found = new Map<string, CampaignCounters>(campaignIds.map((id) => [id, NO_COUNTS]));
  if (campaignIds.length === 0) return found;
  const rows = await db.query<SummedRow & { campaign_id: string }>(
    `SELECT campaign_id, ${SUMMED_COUNTERS} FROM campaign_counters
     WHERE workspace_id = $1 AND campaign_id = ANY($2::uuid[]) GROUP BY campaign_id`,
    { bind: [workspaceId, campaignIds], type: QueryTypes.SELECT, transaction },
  );
  for (const row of rows) found.set(row.campaign_id, toCounters(row));
  return found;
}
