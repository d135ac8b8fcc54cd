import { QueryTypes, type Sequelize, type Transaction } from 'sequelize';
import type { Channel } from '../../core/identities';
import type { UsageKind } from '../../core/usage';
import { startFallback } from './message-fallback';
import { insertMessageEvent } from './message-events';
import type { DroppedRecipient } from './messages';
import { releaseQuota } from './usage';

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
 * Claims messages for one provider call each, every message with its attempt's own claim, in one statement
 * (group-committed by the delivery activities: many attempts, one round trip). A message is taken when no
 * attempt holds it, or when the holder's lease ran out (it died, or lost its database): then the old claim
 * is returned, because whether that attempt reached the provider is unknown. Rows are locked in id order,
 * so concurrent claims of overlapping sets cannot deadlock; an attempt counts as claimed only when the row
 * carries its own claim, so two attempts of one message in one statement cannot both win.
 */
export async function claimDeliveries(
  db: Sequelize,
  workspaceId: string,
  attempts: ReadonlyArray<{ messageId: string; claim: string }>,
  leaseMs: number,
): Promise<DeliveryClaim[]> {
  const rows = await db.query<{ id: string; claim: string; claimed: boolean; previous_claim: string | null; waiting: boolean | null; lease_left_ms: number | null }>(
    `WITH wanted AS (SELECT * FROM unnest($2::uuid[], $3::uuid[]) AS w (id, claim)),
     locked AS (
       SELECT m.id, m.delivery_claim AS previous_claim FROM messages m
       WHERE m.workspace_id = $1 AND m.id IN (SELECT id FROM wanted) ORDER BY m.id FOR UPDATE
     ),
     claimed AS (
       UPDATE messages m SET status = 'sending', delivery_claim = w.claim,
         delivery_claimed_until = now() + make_interval(secs => $4::double precision / 1000), updated_at = now()
       FROM locked p JOIN wanted w ON w.id = p.id
       WHERE m.id = p.id AND m.status IN ('queued', 'sending') AND m.provider_message_id IS NULL
         AND (m.delivery_claim IS NULL OR m.delivery_claimed_until < now())
       RETURNING m.id, m.delivery_claim AS claim, p.previous_claim
     )
     SELECT w.id, w.claim, c.id IS NOT NULL AS claimed, c.previous_claim,
       m.status IN ('queued', 'sending') AND m.provider_message_id IS NULL AS waiting,
       EXTRACT(EPOCH FROM m.delivery_claimed_until - now()) * 1000 AS lease_left_ms
     FROM wanted w
     LEFT JOIN claimed c ON c.id = w.id AND c.claim = w.claim
     LEFT JOIN messages m ON m.workspace_id = $1 AND m.id = w.id`,
    { bind: [workspaceId, attempts.map((attempt) => attempt.messageId), attempts.map((attempt) => attempt.claim), leaseMs], type: QueryTypes.SELECT },
  );
  const byAttempt = new Map(rows.map((row) => [`${row.id}:${row.claim}`, row]));
  return attempts.map(({ messageId, claim }): DeliveryClaim => {
    const row = byAttempt.get(`${messageId}:${claim}`);
    if (row?.claimed) return { state: 'claimed', previousClaim: row.previous_claim };
    // The statement reads the rows as they were when it began: a claim another attempt committed meanwhile
    // shows no lease yet, and the attempt looks again a second later.
    if (!row?.waiting) return { state: 'done' };
    return { state: 'busy', leaseLeftMs: Math.max(0, Number(row.lease_left_ms ?? 0)) };
  });
}

/**
 * Extends live claims, many in one statement; returns the ids whose claim is still the attempt's own.
 * Rows are locked in id order, as the claims and records lock them, so these cannot deadlock.
 */
export async function renewDeliveryClaims(
  db: Sequelize,
  workspaceId: string,
  claims: ReadonlyArray<{ messageId: string; claim: string }>,
  leaseMs: number,
): Promise<string[]> {
  if (claims.length === 0) return [];
  const rows = await db.query<{ id: string }>(
    `WITH held AS (
       SELECT m.id FROM messages m JOIN unnest($2::uuid[], $3::uuid[]) AS c (id, claim) ON c.id = m.id AND c.claim = m.delivery_claim
       WHERE m.workspace_id = $1 ORDER BY m.id FOR UPDATE OF m
     )
     UPDATE messages m SET delivery_claimed_until = now() + make_interval(secs => $4::double precision / 1000)
     FROM held WHERE m.id = held.id RETURNING m.id`,
    { bind: [workspaceId, claims.map((claim) => claim.messageId), claims.map((claim) => claim.claim), leaseMs], type: QueryTypes.SELECT },
  );
  return rows.map((row) => row.id);
}

/** Gives a claim back without a send (the provider refused before accepting, or preparation failed after the claim). */
export async function releaseDeliveryClaim(db: Sequelize, workspaceId: string, messageId: string, claim: string): Promise<void> {
  await db.query('UPDATE messages SET delivery_claim = NULL, delivery_claimed_until = NULL WHERE workspace_id = $1 AND id = $2 AND delivery_claim = $3', {
    bind: [workspaceId, messageId, claim],
  });
}

export interface SentReceipt {
  messageId: string;
  provider: string;
  providerMessageId: string;
  data?: Record<string, unknown>;
}

/**
 * Records providers' acceptances: status sent, the provider id, the `sent` event (with `data`, such as the
 * attachments left out) and the claim released, for many messages in one statement (group-committed by
 * the delivery activities: this runs for every message sent). Idempotent: a repeat after a lost answer
 * finds the message sent and the event stored, and changes nothing. Rows go in id order, so concurrent
 * records cannot deadlock.
 */
export async function recordSent(db: Sequelize, workspaceId: string, receipts: readonly SentReceipt[]): Promise<void> {
  const sorted = [...receipts].sort((a, b) => a.messageId.localeCompare(b.messageId));
  await db.query(
    `WITH receipt AS (SELECT * FROM unnest($2::uuid[], $3::text[], $4::text[], $5::jsonb[]) AS r (id, provider, provider_message_id, data)),
     sent AS (
       UPDATE messages m SET status = 'sent', provider = r.provider, provider_message_id = r.provider_message_id,
         delivery_claim = NULL, delivery_claimed_until = NULL, updated_at = now()
       FROM receipt r
       WHERE m.workspace_id = $1 AND m.id = r.id AND m.status IN ('queued', 'sending')
       RETURNING m.id
     )
     INSERT INTO message_events (id, workspace_id, message_id, type, provider_event_id, data)
     SELECT gen_random_uuid(), $1, r.id, 'sent', 'sent:' || r.provider_message_id, r.data FROM receipt r
     ON CONFLICT (message_id, provider_event_id) DO NOTHING`,
    {
      bind: [
        workspaceId,
        sorted.map((receipt) => receipt.messageId),
        sorted.map((receipt) => receipt.provider),
        sorted.map((receipt) => receipt.providerMessageId),
        sorted.map((receipt) => JSON.stringify(receipt.data ?? {})),
      ],
    },
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
    const moved = await db.query<ReservedUnits & { falls_back: boolean }>(
      `UPDATE messages SET status = 'failed', delivery_claim = NULL, delivery_claimed_until = NULL, updated_at = now()
       WHERE workspace_id = $1 AND id = $2 AND status IN ('queued', 'sending')
       RETURNING ${RESERVED_UNITS('messages', 'quota_units')}, jsonb_typeof(content->'fallback') = 'array' AND jsonb_array_length(content->'fallback') > 0 AS falls_back`,
      { bind: [workspaceId, messageId], type: QueryTypes.SELECT, transaction },
    );
    if (!moved[0]) return false;
    await releaseUnits(db, workspaceId, moved[0], transaction);
    await insertMessageEvent(db, workspaceId, messageId, { type: 'failed', reason, data }, transaction);
    // With a fallback chain, the next channel's message is written with the failure, in one transaction.
    if (moved[0].falls_back) await startFallback(db, workspaceId, messageId, reason, transaction);
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
    const rows = await db.query<ReservedUnits>(
      `UPDATE messages m SET to_addresses = $3, cc_addresses = $4, bcc_addresses = $5,
         dropped_recipients = m.dropped_recipients || $6::jsonb,
         quota_units = $7, updated_at = now()
       FROM (SELECT id, quota_units AS before FROM messages WHERE workspace_id = $1 AND id = $2 FOR UPDATE) p
       WHERE m.id = p.id AND m.status IN ('queued', 'sending') AND m.provider_message_id IS NULL
       RETURNING ${RESERVED_UNITS('m', 'p.before - $7')}`,
      {
        bind: [workspaceId, messageId, remaining.to, remaining.cc, remaining.bcc, JSON.stringify(dropped), remaining.to.length + remaining.cc.length + remaining.bcc.length],
        type: QueryTypes.SELECT,
        transaction,
      },
    );
    if (!rows[0]) return false;
    await releaseUnits(db, workspaceId, rows[0], transaction);
    return true;
  });
}

/**
 * A message's units to give back and where they were counted: its channel; `inbox` for mail of an agent
 * inbox, else its kind; a campaign's on the day the send started (the snapshot reserved them), others on the
 * day the message was written.
 */
interface ReservedUnits {
  units: number;
  quota_period: string;
  channel: Channel;
  usage_kind: UsageKind;
  reserved_at: Date;
}

const RESERVED_UNITS = (m: string, units: string) => `${units} AS units, ${m}.quota_period, ${m}.channel,
  CASE WHEN EXISTS (SELECT 1 FROM inbox_messages i WHERE i.message_id = ${m}.id) THEN 'inbox' ELSE ${m}.kind END AS usage_kind,
  COALESCE((SELECT c.started_at FROM campaigns c WHERE c.id = ${m}.campaign_id), ${m}.created_at) AS reserved_at`;

async function releaseUnits(db: Sequelize, workspaceId: string, reserved: ReservedUnits, transaction: Transaction): Promise<void> {
  const { channel, usage_kind: kind, reserved_at: at } = reserved;
  await releaseQuota(db, workspaceId, reserved.quota_period, Number(reserved.units), { channel, kind, at }, transaction);
}
