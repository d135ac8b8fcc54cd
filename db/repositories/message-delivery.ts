import { QueryTypes, type Sequelize, type Transaction } from 'sequelize';
import { insertMessageEvent } from './message-events';
import type { DroppedRecipient } from './messages';

/**
 * The delivery fence and the message's end states. Every function here moves a message only forward and
 * only once, so a retried or duplicated step (Temporal retries, a reset, the reconciler) changes nothing
 * the first one did not.
 */

export type DeliveryClaim =
  /** This attempt may call the provider. `previousClaim` is set when an earlier attempt claimed and vanished. */
  | { state: 'claimed'; previousClaim: string | null }
  /** Another attempt holds a live claim: stand down, and look again when its lease would end. */
  | { state: 'busy'; leaseLeftMs: number }
  /** The message is no longer waiting to be sent (sent, failed, canceled, gone). */
  | { state: 'done' };

/**
 * Claims the message for one provider call. Taken when no attempt holds it, or when the holder's lease ran
 * out (it died, or lost its database): then the old claim is returned, because whether that attempt
 * reached the provider is unknown.
 */
export async function claimDelivery(
  db: Sequelize,
  workspaceId: string,
  messageId: string,
  claim: string,
  leaseMs: number,
): Promise<DeliveryClaim> {
  const rows = await db.query<{ previous_claim: string | null }>(
    `UPDATE messages m SET status = 'sending', delivery_claim = $3,
       delivery_claimed_until = now() + make_interval(secs => $4::double precision / 1000), updated_at = now()
     FROM (SELECT id, delivery_claim AS previous_claim FROM messages WHERE workspace_id = $1 AND id = $2 FOR UPDATE) p
     WHERE m.id = p.id AND m.status IN ('queued', 'sending') AND m.provider_message_id IS NULL
       AND (m.delivery_claim IS NULL OR m.delivery_claimed_until < now())
     RETURNING p.previous_claim`,
    { bind: [workspaceId, messageId, claim, leaseMs], type: QueryTypes.SELECT },
  );
  if (rows[0]) return { state: 'claimed', previousClaim: rows[0].previous_claim };
  const current = await db.query<{ waiting: boolean; lease_left_ms: number | null }>(
    `SELECT status IN ('queued', 'sending') AND provider_message_id IS NULL AS waiting,
       EXTRACT(EPOCH FROM delivery_claimed_until - now()) * 1000 AS lease_left_ms
     FROM messages WHERE workspace_id = $1 AND id = $2`,
    { bind: [workspaceId, messageId], type: QueryTypes.SELECT },
  );
  if (!current[0]?.waiting) return { state: 'done' };
  return { state: 'busy', leaseLeftMs: Math.max(0, Number(current[0].lease_left_ms ?? 0)) };
}

/** Extends a live claim; false when the claim is no longer this attempt's. */
export async function renewDeliveryClaim(db: Sequelize, workspaceId: string, messageId: string, claim: string, leaseMs: number): Promise<boolean> {
  const rows = await db.query<{ id: string }>(
    `UPDATE messages SET delivery_claimed_until = now() + make_interval(secs => $4::double precision / 1000)
     WHERE workspace_id = $1 AND id = $2 AND delivery_claim = $3 RETURNING id`,
    { bind: [workspaceId, messageId, claim, leaseMs], type: QueryTypes.SELECT },
  );
  return rows.length === 1;
}

/** Gives a claim back without a send (the provider refused before accepting, or preparation failed after the claim). */
export async function releaseDeliveryClaim(db: Sequelize, workspaceId: string, messageId: string, claim: string): Promise<void> {
  await db.query('UPDATE messages SET delivery_claim = NULL, delivery_claimed_until = NULL WHERE workspace_id = $1 AND id = $2 AND delivery_claim = $3', {
    bind: [workspaceId, messageId, claim],
  });
}

/**
 * Records the provider's acceptance: status sent, its id, the `sent` event (with `data`, such as the
 * attachments left out) and the claim released, in one statement (one round trip: this runs for every
 * message sent). Idempotent: a repeat after a lost answer finds the message sent and the event stored,
 * and changes nothing.
 */
export async function recordSent(
  db: Sequelize,
  workspaceId: string,
  messageId: string,
  receipt: { provider: string; providerMessageId: string; data?: Record<string, unknown> },
): Promise<void> {
  const { provider, providerMessageId } = receipt;
  await db.query(
    `WITH sent AS (
       UPDATE messages SET status = 'sent', provider = $3, provider_message_id = $4, delivery_claim = NULL,
         delivery_claimed_until = NULL, updated_at = now()
       WHERE workspace_id = $1 AND id = $2 AND status IN ('queued', 'sending')
       RETURNING id
     )
     INSERT INTO message_events (id, workspace_id, message_id, type, provider_event_id, data)
     VALUES (gen_random_uuid(), $1, $2, 'sent', $5, $6)
     ON CONFLICT (message_id, provider_event_id) DO NOTHING`,
    { bind: [workspaceId, messageId, provider, providerMessageId, `sent:${providerMessageId}`, JSON.stringify(receipt.data ?? {})] },
  );
}

/**
 * The end state of a message that will never be sent: status `failed`, a `failed` event with the reason,
 * and its quota units given back, together. Only a message still waiting moves, so the units are released
 * once however often this runs. Returns whether it moved.
 */
export async function failMessage(
  db: Sequelize,
  workspaceId: string,
  messageId: string,
  reason: string,
  data: Record<string, unknown> = {},
  outer?: Transaction,
): Promise<boolean> {
  const work = async (transaction: Transaction) => {
    const moved = await db.query<{ quota_units: number; quota_period: string }>(
      `UPDATE messages SET status = 'failed', delivery_claim = NULL, delivery_claimed_until = NULL, updated_at = now()
       WHERE workspace_id = $1 AND id = $2 AND status IN ('queued', 'sending') RETURNING quota_units, quota_period`,
      { bind: [workspaceId, messageId], type: QueryTypes.SELECT, transaction },
    );
    if (!moved[0]) return false;
    await releaseUnits(db, workspaceId, moved[0].quota_period, moved[0].quota_units, transaction);
    await insertMessageEvent(db, workspaceId, messageId, { type: 'failed', reason, data }, transaction);
    return true;
  };
  return outer ? work(outer) : db.transaction(work);
}

/**
 * Takes recipients suppressed since acceptance off a waiting message (they are not mailed) and gives back
 * their quota units. The addresses are the formatted mailboxes stored on the message.
 */
export async function dropRecipients(
  db: Sequelize,
  workspaceId: string,
  messageId: string,
  remaining: { to: string[]; cc: string[]; bcc: string[] },
  dropped: DroppedRecipient[],
): Promise<boolean> {
  return db.transaction(async (transaction) => {
    const rows = await db.query<{ released: number; quota_period: string }>(
      `UPDATE messages m SET to_addresses = $3, cc_addresses = $4, bcc_addresses = $5,
         dropped_recipients = m.dropped_recipients || $6::jsonb,
         quota_units = $7, updated_at = now()
       FROM (SELECT id, quota_units AS before FROM messages WHERE workspace_id = $1 AND id = $2 FOR UPDATE) p
       WHERE m.id = p.id AND m.status IN ('queued', 'sending') AND m.provider_message_id IS NULL
       RETURNING p.before - $7 AS released, m.quota_period`,
      {
        bind: [workspaceId, messageId, remaining.to, remaining.cc, remaining.bcc, JSON.stringify(dropped), remaining.to.length + remaining.cc.length + remaining.bcc.length],
        type: QueryTypes.SELECT,
        transaction,
      },
    );
    if (!rows[0]) return false;
    await releaseUnits(db, workspaceId, rows[0].quota_period, Number(rows[0].released), transaction);
    return true;
  });
}

async function releaseUnits(db: Sequelize, workspaceId: string, period: string, units: number, transaction: Transaction): Promise<void> {
  if (units <= 0) return;
  await db.query('UPDATE usage_counters SET used = GREATEST(0, used - $3) WHERE workspace_id = $1 AND period_start = $2', {
    bind: [workspaceId, period, units],
    transaction,
  });
}
