import { QueryTypes, type Sequelize } from 'sequelize';

/** Messages whose send workflow is not known to be started yet (the outbox of the send path). */
export async function markDispatched(db: Sequelize, messageIds: readonly string[]): Promise<void> {
  if (messageIds.length === 0) return;
  await db.query('UPDATE messages SET dispatched_at = now() WHERE id = ANY($1::uuid[]) AND dispatched_at IS NULL', {
    bind: [messageIds],
  });
}

/**
 * The outbox: claims messages whose send workflow is not known to be started, hands them to `start`
 * and marks the ones it started. SKIP LOCKED lets several workers drain it without waiting on each other;
 * `minAgeMs` leaves fresh rows to the API's own start.
 */
export async function drainOutbox(
  db: Sequelize,
  options: { minAgeMs: number; limit: number },
  start: (messages: Array<{ workspaceId: string; messageId: string }>) => Promise<string[]>,
): Promise<number> {
  return db.transaction(async (transaction) => {
    const rows = await db.query<{ id: string; workspace_id: string }>(
      `SELECT id, workspace_id FROM messages
       WHERE dispatched_at IS NULL AND created_at <= now() - make_interval(secs => $1::double precision / 1000)
       ORDER BY created_at LIMIT $2 FOR UPDATE SKIP LOCKED`,
      { bind: [options.minAgeMs, options.limit], type: QueryTypes.SELECT, transaction },
    );
    if (rows.length === 0) return 0;
    const started = await start(rows.map((row) => ({ workspaceId: row.workspace_id, messageId: row.id })));
    if (started.length) {
      await db.query('UPDATE messages SET dispatched_at = now() WHERE id = ANY($1::uuid[])', { bind: [started], transaction });
    }
    return started.length;
  });
}
