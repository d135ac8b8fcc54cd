import { QueryTypes, type Sequelize } from 'sequelize';

/** What waits in one outbox class: how many, and the age of the oldest (null when empty). */
export interface OutboxClassDepth {
  /** `transactional`, `journey`, `campaign` (messages, by their priority), `webhook` or `inbound`. */
  dispatchClass: string;
  /** The messages' channel; empty for webhook deliveries and inbound mail. */
  channel: string;
  depth: number;
  oldestAgeSeconds: number | null;
}

/**
 * Every outbox's waiting rows, per class, in one statement: messages not yet handed to Temporal (queued,
 * undispatched: the partial index messages_outbox_fair_idx holds exactly them, so this reads the backlog
 * and nothing else; those waiting out a retry backoff included, since they wait too), webhook deliveries not
 * yet dispatched (the partial index webhook_deliveries_pending_idx) and inbound mail whose workflow has not
 * started (inbox_messages_unstarted_idx). Its cost grows with the backlog, never with the tables: the
 * sampler runs it once per interval, not per scrape (workers/outbox-gauges.ts).
 */
export async function outboxDepths(db: Sequelize): Promise<OutboxClassDepth[]> {
  const rows = await db.query<{ class: string; channel: string; depth: string; oldest: number | string | null }>(
    `SELECT CASE priority WHEN 1 THEN 'transactional' WHEN 2 THEN 'journey' ELSE 'campaign' END AS class, channel,
            count(*) AS depth, EXTRACT(EPOCH FROM now() - min(created_at)) AS oldest
     FROM messages WHERE dispatched_at IS NULL AND status = 'queued'
     GROUP BY 1, 2
     UNION ALL
     SELECT 'webhook', '', count(*), EXTRACT(EPOCH FROM now() - min(created_at))
     FROM webhook_deliveries WHERE status = 'pending' AND dispatched_at IS NULL
     UNION ALL
     SELECT 'inbound', '', count(*), EXTRACT(EPOCH FROM now() - min(created_at))
     FROM inbox_messages WHERE status = 'received' AND workflow_started_at IS NULL`,
    { type: QueryTypes.SELECT },
  );
  return rows.map((row) => ({
    dispatchClass: row.class,
    channel: row.channel,
    depth: Number(row.depth),
    oldestAgeSeconds: row.oldest === null ? null : Math.max(0, Number(row.oldest)),
  }));
}
