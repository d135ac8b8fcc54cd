import { QueryTypes, type Sequelize } from 'sequelize';

export interface UnfinishedCampaign {
  workspaceId: string;
  campaignId: string;
  scheduledAt: Date | null;
  /** Null until the audience snapshot is taken; then the recipients written to the outbox so far. */
  cursor: number | null;
}

/**
 * Campaigns not yet ended (scheduled, sending or paused) that have not changed for `staleAfterMs` and are
 * not postponed: the ones whose workflow may have been terminated from the Temporal UI or lost. A
 * sending campaign changes with every page it writes, so a healthy one rarely shows up here.
 */
export async function findStaleCampaigns(db: Sequelize, options: { staleAfterMs: number; limit: number }): Promise<UnfinishedCampaign[]> {
  const rows = await db.query<{ id: string; workspace_id: string; scheduled_at: Date | null; recipient_count: number | null; materialized: number }>(
    `SELECT id, workspace_id, scheduled_at, recipient_count, materialized FROM campaigns
     WHERE status IN ('scheduled', 'sending', 'paused')
       AND updated_at <= now() - make_interval(secs => $1::double precision / 1000)
       AND (reconcile_after IS NULL OR reconcile_after <= now())
     ORDER BY updated_at LIMIT $2`,
    { bind: [options.staleAfterMs, options.limit], type: QueryTypes.SELECT },
  );
  return rows.map((row) => ({
    workspaceId: row.workspace_id,
    campaignId: row.id,
    scheduledAt: row.scheduled_at,
    cursor: row.recipient_count === null ? null : row.materialized,
  }));
}

/** Campaigns whose workflow runs: looked at again only after `ms`. */
export async function postponeCampaignReconcile(db: Sequelize, campaignIds: readonly string[], ms: number): Promise<void> {
  if (campaignIds.length === 0) return;
  await db.query(
    `UPDATE campaigns SET reconcile_after = now() + make_interval(secs => $2::double precision / 1000) WHERE id = ANY($1::uuid[])`,
    { bind: [campaignIds, ms] },
  );
}
