import { QueryTypes, type Sequelize } from 'sequelize';

/** Messages whose send workflow is not known to be started yet (the outbox of the send path). */
export async function markDispatched(db: Sequelize, messageIds: readonly string[]): Promise<void> {
  if (messageIds.length === 0) return;
  await db.query(
    'UPDATE messages SET dispatched_at = now(), dispatch_lease_until = NULL WHERE id = ANY($1::uuid[]) AND dispatched_at IS NULL',
    { bind: [messageIds] },
  );
}

/**
 * The outbox: claims messages whose send workflow is not known to be started, hands them to `start` and
 * marks the ones it started. Rows are claimed with a lease in one short statement, not locked while
 * Temporal answers: a slow start never holds row locks (or a connection in a transaction), and a drainer
 * that dies mid-round leaves rows that another takes once the lease runs out. A row started twice is
 * harmless (the workflow id rejects the second). `minAgeMs` leaves fresh rows to the API's own start.
 */
export async function drainOutbox(
  db: Sequelize,
  options: { minAgeMs: number; limit: number; leaseMs: number },
  start: (messages: Array<{ workspaceId: string; messageId: string }>) => Promise<string[]>,
): Promise<number> {
  const rows = await db.query<{ id: string; workspace_id: string }>(
    `UPDATE messages SET dispatch_lease_until = now() + make_interval(secs => $3::double precision / 1000)
     WHERE id IN (
       SELECT id FROM messages
       WHERE dispatched_at IS NULL AND created_at <= now() - make_interval(secs => $1::double precision / 1000)
         AND (dispatch_lease_until IS NULL OR dispatch_lease_until < now())
       ORDER BY created_at LIMIT $2 FOR UPDATE SKIP LOCKED)
     RETURNING id, workspace_id`,
    { bind: [options.minAgeMs, options.limit, options.leaseMs], type: QueryTypes.SELECT },
  );
  if (rows.length === 0) return 0;
  const started = await start(rows.map((row) => ({ workspaceId: row.workspace_id, messageId: row.id })));
  await markDispatched(db, started);
  return started.length;
}
