import { QueryTypes, type Sequelize } from 'sequelize';

/** Sums of `inbox_daily_counters` (moved in the transaction of each event, never recomputed from messages). */

export interface InboxVolumes {
  received: number;
  sent: number;
  delivered: number;
  bounced: number;
}

export interface InboxMetricsRows {
  daily: Array<InboxVolumes & { day: string }>;
  perInbox: Array<InboxVolumes & { inboxId: string; address: string }>;
}

type Sums = { received: string; sent: string; delivered: string; bounced: string };

const volumes = (row: Sums): InboxVolumes => ({
  received: Number(row.received),
  sent: Number(row.sent),
  delivered: Number(row.delivered),
  bounced: Number(row.bounced),
});

const SUMS = 'COALESCE(sum(c.received), 0) AS received, COALESCE(sum(c.sent), 0) AS sent, COALESCE(sum(c.delivered), 0) AS delivered, COALESCE(sum(c.bounced), 0) AS bounced';

/** Days from `from` to `to` inclusive (YYYY-MM-DD, UTC days). Days without counters are left out of `daily`. */
export async function inboxMetrics(db: Sequelize, workspaceId: string, range: { from: string; to: string }): Promise<InboxMetricsRows> {
  const [daily, perInbox] = await Promise.all([
    db.query<Sums & { day: string }>(
      `SELECT to_char(c.day, 'YYYY-MM-DD') AS day, ${SUMS} FROM inbox_daily_counters c
       WHERE c.workspace_id = $1 AND c.day BETWEEN $2::date AND $3::date GROUP BY c.day ORDER BY c.day`,
      { bind: [workspaceId, range.from, range.to], type: QueryTypes.SELECT },
    ),
    // Every inbox of the workspace, with zeros when it had no traffic in the range.
    db.query<Sums & { inbox_id: string; address: string }>(
      `SELECT i.id AS inbox_id, i.local_part || '@' || d.name AS address, ${SUMS}
       FROM inboxes i JOIN domains d ON d.id = i.domain_id
       LEFT JOIN inbox_daily_counters c ON c.inbox_id = i.id AND c.day BETWEEN $2::date AND $3::date
       WHERE i.workspace_id = $1 GROUP BY i.id, d.name ORDER BY i.created_at DESC, i.id DESC`,
      { bind: [workspaceId, range.from, range.to], type: QueryTypes.SELECT },
    ),
  ]);
  return {
    daily: daily.map((row) => ({ day: row.day, ...volumes(row) })),
    perInbox: perInbox.map((row) => ({ inboxId: row.inbox_id, address: row.address, ...volumes(row) })),
  };
}
