import { QueryTypes, type Sequelize, type Transaction } from 'sequelize';

/** A webhook endpoint as the API shows it (its secrets stay sealed in the database). */
export interface WebhookRecord {
  id: string;
  workspaceId: string;
  url: string;
  description: string | null;
  events: string[];
  enabled: boolean;
  /** Why the service disabled it ('gone', 'failing'); null while enabled or when disabled by its owner. */
  disabledReason: string | null;
  createdAt: Date;
}

interface WebhookRow {
  id: string;
  workspace_id: string;
  url: string;
  description: string | null;
  events: string[];
  enabled: boolean;
  disabled_reason: string | null;
  created_at: Date;
}

const COLUMNS = 'id, workspace_id, url, description, events, enabled, disabled_reason, created_at';

const toRecord = (row: WebhookRow): WebhookRecord => ({
  id: row.id,
  workspaceId: row.workspace_id,
  url: row.url,
  description: row.description,
  events: row.events,
  enabled: row.enabled,
  disabledReason: row.disabled_reason,
  createdAt: row.created_at,
});

export interface NewWebhook {
  id: string;
  url: string;
  description: string | null;
  events: string[];
  enabled: boolean;
  secretSealed: string;
}

/**
 * Adds an endpoint unless the workspace already has `max`. The count and the insert run under a lock of
 * the workspace's webhooks, so concurrent creations cannot pass the limit together.
 */
export async function insertWebhook(db: Sequelize, workspaceId: string, webhook: NewWebhook, max: number): Promise<WebhookRecord | 'limit'> {
  return db.transaction(async (transaction) => {
    await db.query('SELECT pg_advisory_xact_lock(hashtext($1))', { bind: [`webhooks:${workspaceId}`], transaction });
    const [{ count }] = await db.query<{ count: string }>('SELECT count(*) FROM webhooks WHERE workspace_id = $1', {
      bind: [workspaceId],
      type: QueryTypes.SELECT,
      transaction,
    });
    if (Number(count) >= max) return 'limit';
    const rows = await db.query<WebhookRow>(
      `INSERT INTO webhooks (id, workspace_id, url, description, events, enabled, secret_sealed)
       VALUES ($1, $2, $3, $4, $5, $6, $7) RETURNING ${COLUMNS}`,
      {
        bind: [webhook.id, workspaceId, webhook.url, webhook.description, webhook.events, webhook.enabled, webhook.secretSealed],
        type: QueryTypes.SELECT,
        transaction,
      },
    );
    return toRecord(rows[0]);
  });
}

export async function listWebhooks(db: Sequelize, workspaceId: string): Promise<WebhookRecord[]> {
  const rows = await db.query<WebhookRow>(`SELECT ${COLUMNS} FROM webhooks WHERE workspace_id = $1 ORDER BY created_at DESC, id DESC`, {
    bind: [workspaceId],
    type: QueryTypes.SELECT,
  });
  return rows.map(toRecord);
}

export async function findWebhook(db: Sequelize, workspaceId: string, id: string): Promise<WebhookRecord | null> {
  const rows = await db.query<WebhookRow>(`SELECT ${COLUMNS} FROM webhooks WHERE workspace_id = $1 AND id = $2`, {
    bind: [workspaceId, id],
    type: QueryTypes.SELECT,
  });
  return rows[0] ? toRecord(rows[0]) : null;
}

export interface WebhookChanges {
  url?: string;
  description?: string | null;
  events?: string[];
  enabled?: boolean;
}

/**
 * Changes an endpoint. Enabling a disabled one starts its health afresh; disabling it ends its waiting deliveries
 * (see `disableWebhook`). Absent fields stay.
 */
export async function updateWebhook(db: Sequelize, workspaceId: string, id: string, changes: WebhookChanges): Promise<WebhookRecord | null> {
  return db.transaction(async (transaction) => {
    const rows = await db.query<WebhookRow & { was_enabled: boolean }>(
      `UPDATE webhooks w SET
         url = COALESCE($3, w.url),
         description = CASE WHEN $4::boolean THEN $5 ELSE w.description END,
         events = COALESCE($6, w.events),
         enabled = COALESCE($7, w.enabled),
         disabled_reason = CASE WHEN $7 IS NULL THEN w.disabled_reason ELSE NULL END,
         failing_since = CASE WHEN $7 AND NOT before.enabled THEN NULL ELSE w.failing_since END,
         updated_at = now()
       FROM (SELECT enabled FROM webhooks WHERE workspace_id = $1 AND id = $2 FOR UPDATE) before
       WHERE w.workspace_id = $1 AND w.id = $2
       RETURNING ${COLUMNS.split(', ').map((column) => `w.${column}`).join(', ')}, before.enabled AS was_enabled`,
      {
        bind: [
          workspaceId, id, changes.url ?? null, 'description' in changes, changes.description ?? null, changes.events ?? null,
          changes.enabled ?? null,
        ],
        type: QueryTypes.SELECT,
        transaction,
      },
    );
    if (!rows[0]) return null;
    if (rows[0].was_enabled && !rows[0].enabled) await failWaitingDeliveries(db, id, 'the endpoint was disabled', transaction);
    return toRecord(rows[0]);
  });
}

/** Removes an endpoint with its deliveries and their log; returns what it was. */
export async function deleteWebhook(db: Sequelize, workspaceId: string, id: string): Promise<WebhookRecord | null> {
  const rows = await db.query<WebhookRow>(`DELETE FROM webhooks WHERE workspace_id = $1 AND id = $2 RETURNING ${COLUMNS}`, {
    bind: [workspaceId, id],
    type: QueryTypes.SELECT,
  });
  return rows[0] ? toRecord(rows[0]) : null;
}

/**
 * Makes `sealed` the signing secret; the one it replaces keeps signing until `previousUntil`. A second
 * rotation within that time retires the oldest secret at once: two sign at most.
 */
export async function rotateWebhookSecret(
  db: Sequelize,
  workspaceId: string,
  id: string,
  sealed: string,
  previousUntil: Date,
): Promise<WebhookRecord | null> {
  const rows = await db.query<WebhookRow>(
    `UPDATE webhooks SET previous_secret_sealed = secret_sealed, previous_secret_expires_at = $4, secret_sealed = $3, updated_at = now()
     WHERE workspace_id = $1 AND id = $2 RETURNING ${COLUMNS}`,
    { bind: [workspaceId, id, sealed, previousUntil], type: QueryTypes.SELECT },
  );
  return rows[0] ? toRecord(rows[0]) : null;
}

/**
 * Ends the deliveries of an endpoint that were still waiting for their first dispatch: a disabled
 * endpoint gets nothing more (they can be retried one by one once it is enabled again). Deliveries in
 * flight end at their next attempt, which finds the endpoint disabled.
 */
export async function failWaitingDeliveries(db: Sequelize, webhookId: string, reason: string, transaction: Transaction): Promise<void> {
  await db.query(
    `UPDATE webhook_deliveries SET status = 'failed', error = $2, next_attempt_at = NULL, updated_at = now()
     WHERE webhook_id = $1 AND status = 'pending' AND dispatch_lease_until IS NULL`,
    { bind: [webhookId, reason], transaction },
  );
}
