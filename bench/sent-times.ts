import { QueryTypes, type Sequelize } from 'sequelize';

/**
 * Waits until `count` messages of the workspace are sent, then returns when each was recorded sent (epoch
 * seconds, in order): what the send and delivery benchmarks compute their rates from.
 */
export async function sentTimes(db: Sequelize, workspaceId: string, count: number): Promise<number[]> {
  for (;;) {
    const [{ sent }] = await db.query<{ sent: string }>("SELECT count(*) AS sent FROM messages WHERE workspace_id = $1 AND status = 'sent'", {
      bind: [workspaceId],
      type: QueryTypes.SELECT,
    });
    if (Number(sent) >= count) break;
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
  const rows = await db.query<{ at: number }>(
    `SELECT EXTRACT(EPOCH FROM e.created_at)::float AS at FROM message_events e JOIN messages m ON m.id = e.message_id
     WHERE m.workspace_id = $1 AND e.type = 'sent' ORDER BY e.created_at`,
    { bind: [workspaceId], type: QueryTypes.SELECT },
  );
  return rows.map((row) => row.at);
}
