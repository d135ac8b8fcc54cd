import { QueryTypes, type Sequelize, type Transaction } from 'sequelize';

/** The events timeline of messages, and the engagement summary the events move. */
export interface NewMessageEvent {
  type: string;
  classification?: string | null;
  reason?: string | null;
  bounceType?: string | null;
  providerEventId?: string | null;
  data?: Record<string, unknown>;
  at?: Date;
}

/** Stores an event once (a redelivered provider notification has the same provider event id). */
export async function insertMessageEvent(
  db: Sequelize,
  workspaceId: string,
  messageId: string,
  event: NewMessageEvent,
  transaction?: Transaction,
): Promise<boolean> {
  const rows = await db.query<{ id: string }>(
    `INSERT INTO message_events (id, workspace_id, message_id, type, classification, reason, bounce_type, provider_event_id, data, created_at)
     VALUES (gen_random_uuid(), $1, $2, $3, $4, $5, $6, $7, $8, COALESCE($9, now()))
     ON CONFLICT (message_id, provider_event_id) DO NOTHING RETURNING id`,
    {
      bind: [
        workspaceId, messageId, event.type, event.classification ?? null, event.reason ?? null, event.bounceType ?? null,
        event.providerEventId ?? null, JSON.stringify(event.data ?? {}), event.at ?? null,
      ],
      type: QueryTypes.SELECT,
      transaction,
    },
  );
  return rows.length === 1;
}

export interface MessageEvent {
  type: string;
  classification: string | null;
  reason: string | null;
  bounceType: string | null;
  linkUrl: string | null;
  linkId: string | null;
  linkRole: string | null;
  createdAt: Date;
}

export async function listMessageEvents(db: Sequelize, workspaceId: string, messageId: string): Promise<MessageEvent[]> {
  const rows = await db.query<{
    type: string; classification: string | null; reason: string | null; bounce_type: string | null;
    link_url: string | null; link_id: string | null; link_role: string | null; created_at: Date;
  }>(
    `SELECT type, classification, reason, bounce_type, link_url, link_id, link_role, created_at
     FROM message_events WHERE workspace_id = $1 AND message_id = $2 ORDER BY created_at, id`,
    { bind: [workspaceId, messageId], type: QueryTypes.SELECT },
  );
  return rows.map((row) => ({
    type: row.type,
    classification: row.classification,
    reason: row.reason,
    bounceType: row.bounce_type,
    linkUrl: row.link_url,
    linkId: row.link_id,
    linkRole: row.link_role,
    createdAt: row.created_at,
  }));
}

/** Folds a bounce or delivery into the message's engagement summary and last-event time. */
export async function touchEngagement(
  db: Sequelize,
  workspaceId: string,
  messageId: string,
  change: { bounced?: boolean; at: Date },
  transaction?: Transaction,
): Promise<void> {
  await db.query(
    `UPDATE messages SET bounced = bounced OR $3, last_event_at = GREATEST(COALESCE(last_event_at, $4), $4), updated_at = now()
     WHERE workspace_id = $1 AND id = $2`,
    { bind: [workspaceId, messageId, change.bounced ?? false, change.at], transaction },
  );
}
