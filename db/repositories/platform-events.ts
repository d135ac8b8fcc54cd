import { randomUUID } from 'node:crypto';
import { QueryTypes, type Sequelize, type Transaction } from 'sequelize';
import { nameBasedUuid } from '../../core/name-based-uuid';

/**
 * Events of the platform that webhooks deliver (`domain.verified`, `domain.failed`, ...). Each is written
 * in the transaction of the change it reports, so an event exists exactly when its change committed.
 */
export interface PlatformEvent {
  id: string;
  workspaceId: string;
  type: string;
  data: Record<string, unknown>;
  createdAt: Date;
}

interface PlatformEventRow {
  id: string;
  workspace_id: string;
  type: string;
  data: Record<string, unknown>;
  created_at: Date;
}

const toEvent = (row: PlatformEventRow): PlatformEvent => ({
  id: row.id,
  workspaceId: row.workspace_id,
  type: row.type,
  data: row.data,
  createdAt: row.created_at,
});

export async function insertPlatformEvent(
  db: Sequelize,
  workspaceId: string,
  event: { type: string; data: Record<string, unknown> },
  transaction?: Transaction,
): Promise<PlatformEvent> {
  const rows = await db.query<PlatformEventRow>(
    'INSERT INTO platform_events (id, workspace_id, type, data) VALUES ($1, $2, $3, $4) RETURNING *',
    { bind: [randomUUID(), workspaceId, event.type, JSON.stringify(event.data)], type: QueryTypes.SELECT, transaction },
  );
  return toEvent(rows[0]);
}

/**
 * Stores an event once per `onceKey` (a provider's id for what it reports): a provider that repeats its
 * callback (Twilio and Telegram retry whatever they did not see answered) adds no second event, so no
 * second webhook. Returns whether this call stored it.
 */
export async function insertPlatformEventOnce(
  db: Sequelize,
  workspaceId: string,
  event: { type: string; data: Record<string, unknown> },
  onceKey: string,
  transaction?: Transaction,
): Promise<boolean> {
  const id = nameBasedUuid('platform-event', workspaceId, event.type, onceKey);
  const rows = await db.query(
    'INSERT INTO platform_events (id, workspace_id, type, data) VALUES ($1, $2, $3, $4) ON CONFLICT (id) DO NOTHING RETURNING id',
    { bind: [id, workspaceId, event.type, JSON.stringify(event.data)], type: QueryTypes.SELECT, transaction },
  );
  return rows.length === 1;
}

/** The workspace's events, oldest first. */
export async function listPlatformEvents(db: Sequelize, workspaceId: string, options: { limit?: number } = {}): Promise<PlatformEvent[]> {
  const rows = await db.query<PlatformEventRow>(
    'SELECT * FROM platform_events WHERE workspace_id = $1 ORDER BY created_at, id LIMIT $2',
    { bind: [workspaceId, options.limit ?? 100], type: QueryTypes.SELECT },
  );
  return rows.map(toEvent);
}
