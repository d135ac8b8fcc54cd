import { QueryTypes, type Sequelize, type Transaction } from 'sequelize';
import type { AttemptVerdict } from '../../core/webhook-delivery';
import type { WebhookEventSource } from '../../core/webhook-payloads';
import { failWaitingDeliveries } from './webhooks';

/** What one attempt of a delivery needs: the delivery, its endpoint and the secrets that sign now. */
export interface AttemptTarget {
  deliveryId: string;
  webhookId: string;
  event: string;
  status: 'pending' | 'succeeded' | 'failed';
  run: number;
  body: string | null;
  messageEventId: string | null;
  platformEventId: string | null;
  url: string;
  enabled: boolean;
  /** Sealed; the previous one only while its rotation lasts. */
  secretSealed: string;
  previousSecretSealed: string | null;
}

export async function findAttemptTarget(db: Sequelize, workspaceId: string, deliveryId: string): Promise<AttemptTarget | null> {
  const rows = await db.query<{
    id: string; webhook_id: string; event: string; status: AttemptTarget['status']; run: number; body: string | null;
    message_event_id: string | null; platform_event_id: string | null; url: string; enabled: boolean; secret_sealed: string;
    previous_secret_sealed: string | null;
  }>(
    `SELECT d.id, d.webhook_id, d.event, d.status, d.run, d.body, d.message_event_id, d.platform_event_id, w.url, w.enabled, w.secret_sealed,
       CASE WHEN w.previous_secret_expires_at > now() THEN w.previous_secret_sealed END AS previous_secret_sealed
     FROM webhook_deliveries d JOIN webhooks w ON w.id = d.webhook_id
     WHERE d.workspace_id = $1 AND d.id = $2`,
    { bind: [workspaceId, deliveryId], type: QueryTypes.SELECT },
  );
  const row = rows[0];
  if (!row) return null;
  return {
    deliveryId: row.id,
    webhookId: row.webhook_id,
    event: row.event,
    status: row.status,
    run: row.run,
    body: row.body,
    messageEventId: row.message_event_id,
    platformEventId: row.platform_event_id,
    url: row.url,
    enabled: row.enabled,
    secretSealed: row.secret_sealed,
    previousSecretSealed: row.previous_secret_sealed,
  };
}

/** The stored event a delivery reports, or null if it is gone. */
export async function findEventSource(db: Sequelize, workspaceId: string, target: AttemptTarget): Promise<WebhookEventSource | null> {
  if (target.platformEventId) {
    const rows = await db.query<{ data: Record<string, unknown>; created_at: Date }>(
      'SELECT data, created_at FROM platform_events WHERE workspace_id = $1 AND id = $2',
      { bind: [workspaceId, target.platformEventId], type: QueryTypes.SELECT },
    );
    return rows[0] ? { kind: 'platform_event', data: rows[0].data, createdAt: rows[0].created_at } : null;
  }
  const rows = await db.query<{
    type: string; classification: string | null; reason: string | null; bounce_type: string | null; link_url: string | null;
    link_id: string | null; link_role: string | null; data: Record<string, unknown>; created_at: Date; message_id: string; kind: string;
    channel: string; from_address: string | null; to_addresses: string[]; subject: string | null; contact_id: string | null;
    campaign_id: string | null; enrollment_id: string | null; automation_id: string | null;
  }>(
    `SELECT e.type, e.classification, e.reason, e.bounce_type, e.link_url, e.link_id, e.link_role, e.data, e.created_at,
       m.id AS message_id, m.kind, m.channel, m.from_address, m.to_addresses, m.subject, m.contact_id, m.campaign_id, m.enrollment_id, m.automation_id
     FROM message_events e JOIN messages m ON m.id = e.message_id
     WHERE e.workspace_id = $1 AND e.id = $2`,
    { bind: [workspaceId, target.messageEventId], type: QueryTypes.SELECT },
  );
  const row = rows[0];
  if (!row) return null;
  return {
    kind: 'message_event',
    type: row.type,
    classification: row.classification,
    reason: row.reason,
    bounceType: row.bounce_type,
    linkUrl: row.link_url,
    linkId: row.link_id,
    linkRole: row.link_role,
    data: row.data,
    createdAt: row.created_at,
    message: {
      id: row.message_id,
      kind: row.kind,
      channel: row.channel,
      from: row.from_address,
      to: row.to_addresses,
      subject: row.subject,
      contactId: row.contact_id,
      campaignId: row.campaign_id,
      enrollmentId: row.enrollment_id,
      automationId: row.automation_id,
    },
  };
}

/** Stores the body of the first attempt; a later attempt (or a racing one) gets the stored body back. */
export async function storeDeliveryBody(db: Sequelize, deliveryId: string, body: string): Promise<string> {
  const rows = await db.query<{ body: string }>('UPDATE webhook_deliveries SET body = COALESCE(body, $2) WHERE id = $1 RETURNING body', {
    bind: [deliveryId, body],
    type: QueryTypes.SELECT,
  });
  return rows[0]?.body ?? body;
}

/**
 * Logs an attempt as `pending` before its request goes out, numbered after the delivery's last. Null when
 * the delivery is no longer this run's to attempt (finished, or taken over by a newer run).
 */
export async function beginAttempt(db: Sequelize, workspaceId: string, deliveryId: string, run: number): Promise<number | null> {
  const rows = await db.query<{ attempt: number }>(
    `WITH counted AS (
       UPDATE webhook_deliveries SET attempts = attempts + 1, next_attempt_at = NULL, updated_at = now()
       WHERE workspace_id = $1 AND id = $2 AND status = 'pending' AND run = $3
       RETURNING id, workspace_id, attempts
     )
     INSERT INTO webhook_attempts (delivery_id, attempt, workspace_id, status)
     SELECT id, attempts, workspace_id, 'pending' FROM counted
     RETURNING attempt`,
    { bind: [workspaceId, deliveryId, run], type: QueryTypes.SELECT },
  );
  return rows[0]?.attempt ?? null;
}

export interface AttemptResult {
  workspaceId: string;
  deliveryId: string;
  webhookId: string;
  attempt: number;
  /** Null when no answer came (timeout, refused connection, blocked address). */
  statusCode: number | null;
  verdict: AttemptVerdict;
  durationMs: number;
  error: string | null;
  /** When the next attempt is due if this one failed; null after the last. */
  retryInMs: number | null;
  /** An endpoint whose attempts have all failed since this long ago is disabled. */
  disableAfterMs: number;
}

export type DeliveryState = 'succeeded' | 'retrying' | 'failed';

/**
 * Records an attempt's answer, in one transaction: the attempt's log entry, the delivery's state and the
 * endpoint's health. A success clears the endpoint's failing streak; a 410 disables it at once; a
 * failure starts (or extends) the streak, and a streak older than `disableAfterMs` disables it. A
 * disabled endpoint's delivery ends here, and so do its deliveries still waiting.
 */
/** What an attempt's answer did: the delivery's state, and whether this answer disabled its endpoint (metrics count it once). */
export interface FinishedAttempt {
  state: DeliveryState;
  disabledNow: boolean;
}

export async function finishAttempt(db: Sequelize, result: AttemptResult): Promise<FinishedAttempt> {
  return db.transaction(async (transaction) => {
    await db.query(
      `UPDATE webhook_attempts SET status = $3, status_code = $4, duration_ms = $5, error = $6 WHERE delivery_id = $1 AND attempt = $2`,
      {
        bind: [result.deliveryId, result.attempt, result.verdict === 'succeeded' ? 'succeeded' : 'failed', result.statusCode, result.durationMs, result.error],
        transaction,
      },
    );
    const { reason: disabled, disabledNow } = await updateHealth(db, result, transaction);
    const state: DeliveryState = result.verdict === 'succeeded' ? 'succeeded' : result.retryInMs !== null && !disabled ? 'retrying' : 'failed';
    const error = state === 'failed' && disabled ? `${result.error}; the endpoint is disabled (${disabled})` : result.error;
    await db.query(
      `UPDATE webhook_deliveries SET status = $3, status_code = $4, error = $5, updated_at = now(),
         next_attempt_at = CASE WHEN $6::double precision IS NULL THEN NULL ELSE now() + make_interval(secs => $6::double precision / 1000) END
       WHERE workspace_id = $1 AND id = $2`,
      {
        bind: [result.workspaceId, result.deliveryId, state === 'retrying' ? 'pending' : state, result.statusCode, error, state === 'retrying' ? result.retryInMs : null],
        transaction,
      },
    );
    return { state, disabledNow };
  });
}

/**
 * The endpoint's health after this answer: why it is disabled, if it is, and whether this answer disabled it
 * (`was_enabled`, read under the row's lock, so of two answers at once only one disables it).
 */
async function updateHealth(db: Sequelize, result: AttemptResult, transaction: Transaction): Promise<{ reason: string | null; disabledNow: boolean }> {
  if (result.verdict === 'succeeded') {
    await db.query('UPDATE webhooks SET failing_since = NULL WHERE id = $1 AND failing_since IS NOT NULL', { bind: [result.webhookId], transaction });
    return { reason: null, disabledNow: false };
  }
  const rows = await db.query<{ enabled: boolean; was_enabled: boolean; disabled_reason: string | null }>(
    `UPDATE webhooks SET
       failing_since = COALESCE(failing_since, now()),
       disabled_reason = CASE
         WHEN NOT enabled THEN disabled_reason
         WHEN $2 THEN 'gone'
         WHEN failing_since <= now() - make_interval(secs => $3::double precision / 1000) THEN 'failing'
       END,
       enabled = enabled AND NOT $2 AND NOT COALESCE(failing_since <= now() - make_interval(secs => $3::double precision / 1000), false),
       updated_at = now()
     FROM (SELECT enabled AS was_enabled FROM webhooks WHERE id = $1 FOR UPDATE) before
     WHERE id = $1
     RETURNING enabled, before.was_enabled, disabled_reason`,
    { bind: [result.webhookId, result.verdict === 'gone', result.disableAfterMs], type: QueryTypes.SELECT, transaction },
  );
  const endpoint = rows[0];
  if (!endpoint || endpoint.enabled) return { reason: null, disabledNow: false };
  const reason = endpoint.disabled_reason === 'gone' ? 'it answered 410 Gone' : endpoint.disabled_reason === 'failing' ? 'its deliveries failed for 5 days' : 'by its owner';
  await failWaitingDeliveries(db, result.webhookId, `the endpoint was disabled: ${reason}`, transaction);
  return { reason, disabledNow: endpoint.was_enabled };
}

/** Ends a delivery without an attempt (its endpoint is disabled, its event gone). */
export async function endDelivery(db: Sequelize, workspaceId: string, deliveryId: string, run: number, error: string): Promise<void> {
  await db.query(
    `UPDATE webhook_deliveries SET status = 'failed', error = $4, next_attempt_at = NULL, updated_at = now()
     WHERE workspace_id = $1 AND id = $2 AND run = $3 AND status = 'pending'`,
    { bind: [workspaceId, deliveryId, run, error] },
  );
}
