import { randomUUID } from 'node:crypto';
import { QueryTypes, type Sequelize, type Transaction } from 'sequelize';
import type { MessageKind } from '../../core/dispatch';
import { FallbackStepSchema } from '../../core/message-content';
import { type PlanName, PLANS, periodKey, usagePeriodAt } from '../../core/plans';
import { insertMessageEvent } from './message-events';
import { reserveQuota } from './usage';

/** The idempotency key of a message's fallback: deterministic, so the link is one index probe both ways. */
export function fallbackKey(messageId: string): string {
  return `fallback:${messageId}`;
}

const StepsSchema = FallbackStepSchema.array();

/**
 * Moves a message that ended `failed` (or undeliverable, by the provider's callback) to the next channel of
 * its fallback chain, in the caller's transaction, so the failure and its fallback are one fact: the next
 * message is written to the outbox like any accepted send (a quota unit reserved, its key
 * `fallback:<failed id>`, status `queued`), carrying the failed message's attachments and the rest of the
 * chain, and both messages get a `fallback` event naming the other. Nothing when the chain is done.
 * When the plan's quota is spent, no message is written and the failed one's event says so.
 */
export async function startFallback(db: Sequelize, workspaceId: string, messageId: string, reason: string, transaction: Transaction): Promise<string | null> {
  const rows = await db.query<{ channel: string; kind: MessageKind; contact_id: string | null; content: Record<string, unknown>; plan: PlanName }>(
    `SELECT m.channel, m.kind, m.contact_id, m.content, w.plan FROM messages m JOIN workspaces w ON w.id = m.workspace_id
     WHERE m.workspace_id = $1 AND m.id = $2`,
    { bind: [workspaceId, messageId], type: QueryTypes.SELECT, transaction },
  );
  const failed = rows[0];
  const steps = failed ? StepsSchema.safeParse(failed.content.fallback ?? []) : null;
  if (!failed || !steps?.success || steps.data.length === 0) return null;
  const [next, ...rest] = steps.data;
  const period = usagePeriodAt(new Date());
  const entry = { channel: next.channel, kind: failed.kind };
  if ((await reserveQuota(db, workspaceId, PLANS[failed.plan], period, 1, entry, transaction)) === null) {
    await insertMessageEvent(
      db, workspaceId, messageId,
      { type: 'fallback', reason: 'quota_exceeded: the plan\'s monthly quota is spent', data: { channel: next.channel }, at: new Date() },
      transaction,
    );
    return null;
  }
  const id = randomUUID();
  const key = fallbackKey(messageId);
  const content = { ...next.content, attachments: failed.content.attachments ?? [], fallback: rest, fallbackOf: messageId };
  await db.query(
    `WITH keyed AS (INSERT INTO message_keys (workspace_id, idempotency_key, message_id, request_hash) VALUES ($1, $3, $2, 'fallback'))
     INSERT INTO messages (id, workspace_id, kind, channel, status, idempotency_key, request_hash, from_address, to_addresses, cc_addresses,
       bcc_addresses, subject, content, template_id, contact_id, quota_units, quota_period, dropped_recipients)
     VALUES ($2, $1, $4, $5, 'queued', $3, 'fallback', $6, $7, '{}', '{}', $8, $9, $10, $11, 1, $12, '[]')`,
    {
      bind: [workspaceId, id, key, failed.kind, next.channel, next.fromAddress, next.to, next.subject, JSON.stringify(content), next.templateId, failed.contact_id, periodKey(period)],
      transaction,
    },
  );
  // Stamped now, not at the transaction's start as the failure is: the timeline shows the failure first.
  const at = new Date();
  await insertMessageEvent(db, workspaceId, messageId, { type: 'fallback', reason, data: { messageId: id, channel: next.channel }, at }, transaction);
  await insertMessageEvent(db, workspaceId, id, { type: 'fallback', reason, data: { fallbackOf: messageId, channel: failed.channel }, at }, transaction);
  return id;
}

/** The message a failed one fell back to, if any. */
export async function findFallbackMessageId(db: Sequelize, workspaceId: string, messageId: string): Promise<string | null> {
  const rows = await db.query<{ message_id: string }>('SELECT message_id FROM message_keys WHERE workspace_id = $1 AND idempotency_key = $2', {
    bind: [workspaceId, fallbackKey(messageId)],
    type: QueryTypes.SELECT,
  });
  return rows[0]?.message_id ?? null;
}
