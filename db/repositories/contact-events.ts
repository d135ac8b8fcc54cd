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

/**
 * A contact's events, newest first, optionally only those before a moment (paging back in time) and without
 * some names (left out in the query, so a page is still `limit` deep in what is kept).
 */
export async function contactEvents(
  db: Sequelize,
  workspaceId: string,
  contactId: string,
  page: { limit: number; before?: Date; exceptNames?: readonly string[] },
): Promise<ContactEventRecord[]> {
  const rows = await db.query<ContactEventRow>(
    `SELECT * FROM contact_events WHERE workspace_id = $1 AND contact_id = $2 AND ($3::timestamptz IS NULL OR occurred_at < $3)
       AND NOT (name = ANY ($5::text[]))
     ORDER BY occurred_at DESC, id DESC LIMIT $4`,
    { bind: [workspaceId, contactId, page.before ?? null, page.limit, page.exceptNames ?? []], type: QueryTypes.SELECT },
  );
  return rows.map(toEvent);
}

/** A behavioural event as POST /events stored it, with the fields its matching needs. */
export interface StoredEvent extends ContactEventRecord {
  workspaceId: string;
}

/**
 * Stores an event of POST /events: the point of acceptance (segments' event conditions count it from
 * here). A repeat of an idempotency key stores nothing and answers the first event, `duplicate`; the
 * unique index decides, so two requests at once store one. `processed_at` stays null until the event
 * was matched against triggers and running enrollments.
 */
export async function acceptContactEvent(
  db: Sequelize,
  workspaceId: string,
  event: { contactId: string; name: string; properties: Record<string, unknown>; occurredAt: Date; idempotencyKey: string | null },
  transaction?: Transaction,
): Promise<{ event: StoredEvent; duplicate: boolean }> {
  const inserted = await db.query<ContactEventRow>(
    `INSERT INTO contact_events (id, workspace_id, contact_id, name, properties, occurred_at, idempotency_key)
     VALUES ($1, $2, $3, $4, $5::jsonb, $6, $7)
     ON CONFLICT (workspace_id, idempotency_key) WHERE idempotency_key IS NOT NULL DO NOTHING RETURNING *`,
    {
      bind: [randomUUID(), workspaceId, event.contactId, event.name, JSON.stringify(event.properties), event.occurredAt, event.idempotencyKey],
      type: QueryTypes.SELECT,
      transaction,
    },
  );
  if (inserted[0]) return { event: { ...toEvent(inserted[0]), workspaceId }, duplicate: false };
  const first = await db.query<ContactEventRow>('SELECT * FROM contact_events WHERE workspace_id = $1 AND idempotency_key = $2', {
    bind: [workspaceId, event.idempotencyKey],
    type: QueryTypes.SELECT,
    transaction,
  });
  return { event: { ...toEvent(first[0]), workspaceId }, duplicate: true };
}

/** An event stored with this idempotency key (a writer that stores its own events once, by a key of its own), or null. */
export async function findEventByKey(db: Sequelize, workspaceId: string, idempotencyKey: string): Promise<StoredEvent | null> {
  const rows = await db.query<ContactEventRow>('SELECT * FROM contact_events WHERE workspace_id = $1 AND idempotency_key = $2', {
    bind: [workspaceId, idempotencyKey],
    type: QueryTypes.SELECT,
  });
  return rows[0] ? { ...toEvent(rows[0]), workspaceId } : null;
}

/** The event was matched against triggers and running enrollments: the sweeper leaves it alone. */
export async function markEventProcessed(db: Sequelize, workspaceId: string, eventId: string): Promise<void> {
  await db.query('UPDATE contact_events SET processed_at = now() WHERE workspace_id = $1 AND id = $2 AND processed_at IS NULL', { bind: [workspaceId, eventId] });
}

/** Events stored but not matched (Temporal was away), stored before `storedBefore`, oldest first (contact_events_unprocessed_idx). */
export async function unprocessedEvents(db: Sequelize, page: { storedBefore: Date; limit: number }): Promise<StoredEvent[]> {
  const rows = await db.query<ContactEventRow & { workspace_id: string }>(
    'SELECT * FROM contact_events WHERE processed_at IS NULL AND created_at < $1 ORDER BY created_at LIMIT $2',
    { bind: [page.storedBefore, page.limit], type: QueryTypes.SELECT },
  );
  return rows.map((row) => ({ ...toEvent(row), workspaceId: row.workspace_id }));
}
