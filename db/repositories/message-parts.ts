import { QueryTypes, type Sequelize } from 'sequelize';

/** The parts of a multi-part message already sent, by position: their provider ids (migration 0018). */
export async function findSentParts(db: Sequelize, workspaceId: string, messageId: string): Promise<Map<number, string>> {
  const rows = await db.query<{ part: number; provider_part_id: string }>(
    'SELECT part, provider_part_id FROM message_parts WHERE workspace_id = $1 AND message_id = $2',
    { bind: [workspaceId, messageId], type: QueryTypes.SELECT },
  );
  return new Map(rows.map((row) => [row.part, row.provider_part_id]));
}

/** Records one sent part; a repeat of the same part keeps the first record. */
export async function recordSentPart(db: Sequelize, workspaceId: string, messageId: string, part: number, providerPartId: string): Promise<void> {
  await db.query(
    `INSERT INTO message_parts (message_id, workspace_id, part, provider_part_id) VALUES ($1, $2, $3, $4)
     ON CONFLICT (message_id, part) DO NOTHING`,
    { bind: [messageId, workspaceId, part, providerPartId] },
  );
}
