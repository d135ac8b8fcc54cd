import type { Sequelize } from 'sequelize';
import { type Plan, periodKey, type UsagePeriod } from '../../core/plans';
import type { UsageKind } from '../../core/usage';
import type { Channel } from '../../core/identities';
import type { SuppressionReason } from '../../core/suppressions';
import { preparedQuery, sqlState, UNIQUE_VIOLATION } from '../prepared';
import type { NewMessage } from './messages';
import { SUPPRESSED_AMONG, suppressionLookup } from './suppressions';
import { USAGE_DAY } from './usage';

export interface AcceptedKey {
  id: string;
  requestHash: string;
}

/**
 * Parameters: workspace, idempotency keys, normalised addresses. Keys are probed one by one through
 * `message_keys`' primary key (key first, migration 0006), suppressions through the address index (0007).
 */
export const ACCEPT_LOOKUP_SQL = `
  SELECT 'key' AS kind, idempotency_key AS name, message_id::text AS id, request_hash AS detail
    FROM message_keys WHERE workspace_id = $1 AND idempotency_key = ANY($2::text[])
  UNION ALL
  SELECT 'suppression', address, NULL, reason FROM suppressions WHERE ${SUPPRESSED_AMONG('$1', "'email'", '$3')}`;

/**
 * The same read for another channel's addresses (WhatsApp numbers, Telegram chat ids). A statement of its
 * own, so email's (the hot path, its plan measured with the channel as a constant) stays as it is.
 */
const CHANNEL_LOOKUP_SQL = `
  SELECT 'key' AS kind, idempotency_key AS name, message_id::text AS id, request_hash AS detail
    FROM message_keys WHERE workspace_id = $1 AND idempotency_key = ANY($2::text[])
  UNION ALL
  SELECT 'suppression', address, NULL, reason FROM suppressions WHERE ${SUPPRESSED_AMONG('$1', '$4::text', '$3')}`;

/**
 * What acceptance reads before it decides, in one query for a whole batch: the messages already accepted
 * under any of these idempotency keys (by key), and which of these addresses are suppressed on the
 * channel (by address as given).
 */
export async function findAcceptedAndSuppressed(
  db: Sequelize,
  workspaceId: string,
  keys: readonly string[],
  addresses: readonly string[],
  channel: Channel = 'email',
): Promise<{ accepted: Map<string, AcceptedKey>; suppressed: Map<string, SuppressionReason> }> {
  const suppressions = suppressionLookup(channel, addresses);
  type Row = { kind: 'key' | 'suppression'; name: string; id: string | null; detail: string };
  const rows = channel === 'email'
    ? await preparedQuery<Row>(db, 'accept-lookup', ACCEPT_LOOKUP_SQL, [workspaceId, keys, suppressions.normalised])
    : await preparedQuery<Row>(db, 'accept-lookup-channel', CHANNEL_LOOKUP_SQL, [workspaceId, keys, suppressions.normalised, channel]);
  const accepted = new Map<string, AcceptedKey>();
  const found: Array<{ address: string; reason: SuppressionReason }> = [];
  for (const row of rows) {
    if (row.kind === 'key' && row.id) accepted.set(row.name, { id: row.id, requestHash: row.detail });
    else found.push({ address: row.name, reason: row.detail as SuppressionReason });
  }
  return { accepted, suppressed: suppressions.byGiven(found) };
}

/** The message already accepted under this idempotency key, if any. */
export async function findAcceptedKey(db: Sequelize, workspaceId: string, key: string): Promise<AcceptedKey | null> {
  return (await findAcceptedAndSuppressed(db, workspaceId, [key], [])).accepted.get(key) ?? null;
}

/** Another request took one of these idempotency keys between the lookup and the insert. */
export class IdempotencyKeyTaken extends Error {}

/**
 * More writes that must happen exactly when the messages are accepted (an inbox's out row and thread):
 * common table expressions appended to the acceptance statement, after `inserted` (which they must test,
 * `WHERE EXISTS (SELECT 1 FROM inserted)`, since every data-modifying CTE runs), with parameters from $6.
 * One statement, so the follow-up and the acceptance commit or fail together. `name` names the statement.
 */
export interface AcceptanceFollowUp {
  name: string;
  ctes: string;
  values: unknown[];
}

/**
 * The point of acceptance, in one statement (so one round trip and no explicit transaction): reserves the
 * messages' quota units together, counts them on today's usage rows (one upsert per channel and kind;
 * `countAs` when they count as another kind than the messages', inbox mail) and inserts them all, or does
 * neither (a named statement: see prepared.ts). Returns the period's new usage, or
 * null when the reservation would pass the plan's limit (nothing is written). Throws IdempotencyKeyTaken
 * when a key was taken meanwhile: the key's primary key fails the whole statement, reservation included.
 */
export async function acceptMessages(
  db: Sequelize,
  workspaceId: string,
  quota: { plan: Plan; period: UsagePeriod; countAs?: UsageKind },
  messages: readonly NewMessage[],
  followUp?: AcceptanceFollowUp,
): Promise<number | null> {
  const limit = quota.plan.overageBilling ? null : quota.plan.monthlyMessages;
  const units = messages.reduce((sum, message) => sum + message.quotaUnits, 0);
  if (limit !== null && units > limit) return null;
  const rows = messages.map((message) => ({
    id: message.id,
    kind: message.kind,
    usage_kind: quota.countAs ?? message.kind,
    channel: message.channel,
    idempotency_key: message.idempotencyKey,
    request_hash: message.requestHash,
    from_address: message.fromAddress,
    to_addresses: message.to,
    cc_addresses: message.cc,
    bcc_addresses: message.bcc,
    subject: message.subject,
    content: message.content,
    template_id: message.templateId,
    campaign_id: message.campaignId ?? null,
    enrollment_id: message.enrollmentId ?? null,
    contact_id: message.contactId ?? null,
    quota_units: message.quotaUnits,
    dropped_recipients: message.droppedRecipients,
    traceparent: message.traceparent ?? null,
  }));
  try {
    const [result] = await preparedQuery<{ used: string | null }>(
      db,
      followUp?.name ?? 'accept-messages',
      `WITH batch AS (
         SELECT * FROM jsonb_to_recordset($3::jsonb) AS m(
           id uuid, kind text, usage_kind text, channel text, idempotency_key text, request_hash text, from_address text,
           to_addresses text[], cc_addresses text[], bcc_addresses text[], subject text, content jsonb,
           template_id uuid, campaign_id uuid, enrollment_id uuid, contact_id uuid, quota_units integer,
           dropped_recipients jsonb, traceparent text)
       ),
       reserved AS (
         INSERT INTO usage_counters AS c (workspace_id, period_start, used) VALUES ($1, $2, $4)
         ON CONFLICT (workspace_id, period_start) DO UPDATE SET used = c.used + EXCLUDED.used
         WHERE $5::bigint IS NULL OR c.used + EXCLUDED.used <= $5::bigint
         RETURNING used
       ),
       daily AS (
         INSERT INTO usage_daily AS d (workspace_id, day, channel, kind, messages)
         SELECT $1, ${USAGE_DAY('$2', 'NULL')}, channel, usage_kind, sum(quota_units) FROM batch
         WHERE EXISTS (SELECT 1 FROM reserved) GROUP BY channel, usage_kind HAVING sum(quota_units) > 0
         ON CONFLICT (workspace_id, day, channel, kind) DO UPDATE SET messages = d.messages + EXCLUDED.messages
       ),
       keyed AS (
         INSERT INTO message_keys (workspace_id, idempotency_key, message_id, request_hash)
         SELECT $1, idempotency_key, id, request_hash FROM batch WHERE EXISTS (SELECT 1 FROM reserved)
       ),
       inserted AS (
         INSERT INTO messages (id, workspace_id, kind, channel, status, idempotency_key, request_hash, from_address,
           to_addresses, cc_addresses, bcc_addresses, subject, content, template_id, campaign_id, enrollment_id,
           contact_id, quota_units, quota_period, dropped_recipients, traceparent)
         SELECT id, $1, kind, channel, 'queued', idempotency_key, request_hash, from_address, to_addresses, cc_addresses,
           bcc_addresses, subject, content, template_id, campaign_id, enrollment_id, contact_id, quota_units, $2,
           dropped_recipients, traceparent
         FROM batch WHERE EXISTS (SELECT 1 FROM reserved)
         RETURNING id
       )${followUp ? `, ${followUp.ctes}` : ''}
       SELECT (SELECT used FROM reserved) AS used, (SELECT count(*) FROM inserted) AS inserted`,
      [workspaceId, periodKey(quota.period), JSON.stringify(rows), units, limit, ...(followUp?.values ?? [])],
    );
    return result.used === null ? null : Number(result.used);
  } catch (error) {
    if (sqlState(error) === UNIQUE_VIOLATION) throw new IdempotencyKeyTaken();
    throw error;
  }
}
