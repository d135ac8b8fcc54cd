import { QueryTypes, type Sequelize } from 'sequelize';

/** The delivery log of an endpoint, as `GET /webhooks/:id/deliveries` shows it. */
export type DeliveryStatus = 'pending' | 'succeeded' | 'failed';

export interface WebhookAttemptRecord {
  attempt: number;
  status: DeliveryStatus;
  statusCode: number | null;
  durationMs: number | null;
  error: string | null;
  startedAt: Date;
}

export interface WebhookDeliveryRecord {
  id: string;
  webhookId: string;
  event: string;
  status: DeliveryStatus;
  statusCode: number | null;
  error: string | null;
  nextAttemptAt: Date | null;
  createdAt: Date;
  attempts: WebhookAttemptRecord[];
}

interface DeliveryRow {
  id: string;
  webhook_id: string;
  event: string;
  status: DeliveryStatus;
  status_code: number | null;
  error: string | null;
  next_attempt_at: Date | null;
  created_at: Date;
}

interface AttemptRow {
  delivery_id: string;
  attempt: number;
  status: DeliveryStatus;
  status_code: number | null;
  duration_ms: number | null;
  error: string | null;
  started_at: Date;
}

const COLUMNS = 'id, webhook_id, event, status, status_code, error, next_attempt_at, created_at';

async function withAttempts(db: Sequelize, workspaceId: string, rows: DeliveryRow[]): Promise<WebhookDeliveryRecord[]> {
  const attempts = rows.length
    ? await db.query<AttemptRow>(
      `SELECT delivery_id, attempt, status, status_code, duration_ms, error, started_at FROM webhook_attempts
       WHERE workspace_id = $1 AND delivery_id = ANY ($2::uuid[]) ORDER BY delivery_id, attempt`,
      { bind: [workspaceId, rows.map((row) => row.id)], type: QueryTypes.SELECT },
    )
    : [];
  const byDelivery = new Map<string, WebhookAttemptRecord[]>();
  for (const row of attempts) {
    const list = byDelivery.get(row.delivery_id) ?? [];
    list.push({ attempt: row.attempt, status: row.status, statusCode: row.status_code, durationMs: row.duration_ms, error: row.error, startedAt: row.started_at });
    byDelivery.set(row.delivery_id, list);
  }
  return rows.map((row) => ({
    id: row.id,
    webhookId: row.webhook_id,
    event: row.event,
    status: row.status,
    statusCode: row.status_code,
    error: row.error,
    nextAttemptAt: row.next_attempt_at,
    createdAt: row.created_at,
    attempts: byDelivery.get(row.id) ?? [],
  }));
}

/** One page of an endpoint's deliveries, newest first, each with its attempts. */
export async function listWebhookDeliveries(
  db: Sequelize,
  workspaceId: string,
  webhookId: string,
  filters: { status?: DeliveryStatus; limit: number; offset: number },
): Promise<{ rows: WebhookDeliveryRecord[]; total: number }> {
  const where = 'workspace_id = $1 AND webhook_id = $2 AND ($3::text IS NULL OR status = $3)';
  const bind = [workspaceId, webhookId, filters.status ?? null];
  const [rows, [{ total }]] = await Promise.all([
    db.query<DeliveryRow>(`SELECT ${COLUMNS} FROM webhook_deliveries WHERE ${where} ORDER BY created_at DESC, id DESC LIMIT $4 OFFSET $5`, {
      bind: [...bind, filters.limit, filters.offset],
      type: QueryTypes.SELECT,
    }),
    db.query<{ total: string }>(`SELECT count(*) AS total FROM webhook_deliveries WHERE ${where}`, { bind, type: QueryTypes.SELECT }),
  ]);
  return { rows: await withAttempts(db, workspaceId, rows), total: Number(total) };
}

export async function findWebhookDelivery(db: Sequelize, workspaceId: string, webhookId: string, id: string): Promise<WebhookDeliveryRecord | null> {
  const rows = await db.query<DeliveryRow>(`SELECT ${COLUMNS} FROM webhook_deliveries WHERE workspace_id = $1 AND webhook_id = $2 AND id = $3`, {
    bind: [workspaceId, webhookId, id],
    type: QueryTypes.SELECT,
  });
  return rows[0] ? (await withAttempts(db, workspaceId, rows))[0] : null;
}

/**
 * Sends a finished delivery again: back to the outbox as a new run of its workflow, with the same body
 * and `webhook-id`, its attempts numbered on from the last. A delivery still pending is left as it is.
 */
export async function requeueWebhookDelivery(db: Sequelize, workspaceId: string, webhookId: string, id: string): Promise<'requeued' | 'pending' | null> {
  const rows = await db.query<{ requeued: boolean }>(
    `WITH target AS (
       SELECT id, status FROM webhook_deliveries WHERE workspace_id = $1 AND webhook_id = $2 AND id = $3 FOR UPDATE
     ), requeued AS (
       UPDATE webhook_deliveries d SET status = 'pending', error = NULL, next_attempt_at = NULL, run = d.run + 1,
         dispatch_lease_until = NULL, dispatched_at = NULL, updated_at = now()
       FROM target WHERE d.id = target.id AND target.status <> 'pending'
       RETURNING d.id
     )
     SELECT EXISTS (SELECT 1 FROM requeued) AS requeued FROM target`,
    { bind: [workspaceId, webhookId, id], type: QueryTypes.SELECT },
  );
  if (!rows[0]) return null;
  return rows[0].requeued ? 'requeued' : 'pending';
}
