import { QueryTypes, type Sequelize } from 'sequelize';

export interface InboundStorage {
  /** Raw bytes of received mail the workspace holds (each inbox's copy counts). */
  bytes: number;
  messages: number;
}

/**
 * What a workspace's received mail takes: `inbound_storage`, moved by triggers on `inbox_messages` (migration
 * 0029) in the statement that adds or removes rows, so this is one primary-key read, never a scan.
 */
export async function inboundStorageUsed(db: Sequelize, workspaceId: string): Promise<InboundStorage> {
  const rows = await db.query<{ bytes: string; messages: string }>(
    'SELECT bytes, messages FROM inbound_storage WHERE workspace_id = $1',
    { bind: [workspaceId], type: QueryTypes.SELECT },
  );
  return { bytes: Number(rows[0]?.bytes ?? 0), messages: Number(rows[0]?.messages ?? 0) };
}
