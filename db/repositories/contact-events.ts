import { randomUUID } from 'node:crypto';
import { QueryTypes, type Sequelize, type Transaction } from 'sequelize';

export interface ContactEventRecord {
  id: string;
  contactId: string;
  name: string;
  properties: Record<string, unknown>;
  occurredAt: Date;
}

interface ContactEventRow {
  id: string;
  contact_id: string;
  name: string;
  properties: Record<string, unknown>;
  occurred_at: Date;
}

const toEvent = (row: ContactEventRow): ContactEventRecord => ({
  id: row.id,
  contactId: row.contact_id,
  name: row.name,
  properties: row.properties,
  occurredAt: row.occurred_at,
});

/** Records a behavioural event of a contact (the events API of a later issue writes through here). */
export async function insertContactEvent(
  db: Sequelize,
  workspaceId: string,
  event: { contactId: string; name: string; properties?: Record<string, unknown>; occurredAt: Date },
  transaction?: Transaction,
): Promise<ContactEventRecord> {
  const rows = await db.query<ContactEventRow>(
    `INSERT INTO contact_events (id, workspace_id, contact_id, name, properties, occurred_at)
     VALUES ($1, $2, $3, $4, $5::jsonb, $6) RETURNING *`,
    {
      bind: [randomUUID(), workspaceId, event.contactId, event.name, JSON.stringify(event.properties ?? {}), event.occurredAt],
      type: QueryTypes.SELECT,
      transaction,
    },
  );
  return toEvent(rows[0]);
}

/** A contact's events, newest first, optionally only those before a moment (paging back in time). */
export async function contactEvents(
  db: Sequelize,
  workspaceId: string,
  contactId: string,
  page: { limit: number; before?: Date },
): Promise<ContactEventRecord[]> {
  const rows = await db.query<ContactEventRow>(
    `SELECT * FROM contact_events WHERE workspace_id = $1 AND contact_id = $2 AND ($3::timestamptz IS NULL OR occurred_at < $3)
     ORDER BY occurred_at DESC, id DESC LIMIT $4`,
    { bind: [workspaceId, contactId, page.before ?? null, page.limit], type: QueryTypes.SELECT },
  );
  return rows.map(toEvent);
}
