import { QueryTypes, type Sequelize, type Transaction } from 'sequelize';
import { type ProviderEvent, recipientsOfMessage } from '../../core/delivery';
import { insertMessageEvent, touchEngagement } from './message-events';
import { findByProviderMessageId, type MessageStatus, moveStatus } from './messages';
import { replayTwilioStatus } from './whatsapp';

export type Suppress = (
  workspaceId: string,
  addresses: string[],
  reason: 'hard_bounce' | 'complaint',
  transaction: Transaction,
) => Promise<void>;

/**
 * What became of a provider event: recorded on its message; already recorded (a redelivery); refused
 * because it names none of the message's recipients; or no message has that provider id (yet).
 */
export type RecordOutcome = 'recorded' | 'duplicate' | 'foreign-recipients' | 'unknown-message';

/** Which statuses an event may move a message from, and to what. Later facts never undo earlier ones. */
const MOVES: Partial<Record<ProviderEvent['type'], { from: MessageStatus[]; to: MessageStatus }>> = {
  delivered: { from: ['sending', 'sent'], to: 'delivered' },
  complaint: { from: ['sending', 'sent', 'delivered'], to: 'complained' },
};

const HARD_BOUNCE_MOVE = { from: ['sending', 'sent', 'delivered'] as MessageStatus[], to: 'bounced' as const };

/** The message an event is about: its workspace, its id, and every address it went to (to, cc, bcc). */
export interface EventMessage {
  workspaceId: string;
  messageId: string;
  recipients: string[];
}

/**
 * Records one provider event on its message, found by the id the provider gave it (SES notifications):
 * see `recordEventOnMessage`.
 */
export async function recordProviderEvent(
  db: Sequelize,
  suppress: Suppress,
  provider: string,
  notificationId: string,
  event: ProviderEvent,
): Promise<RecordOutcome> {
  const found = await findByProviderMessageId(db, provider, event.providerMessageId);
  if (!found) return 'unknown-message';
  return recordEventOnMessage(db, suppress, found, notificationId, event);
}

/**
 * Records one provider event on a message already found (by its provider id, or by our own id, as a VERP
 * bounce and an SMTP refusal name it): the event (once per notification id), the status move, the
 * engagement summary, and the suppression of hard-bounced or complaining addresses, all in one
 * transaction. Only the message's own recipients (to, cc, bcc) are suppressed; a bounce or complaint that
 * names none of them is not recorded at all, and one that names others too keeps them apart in its data.
 * `event.data` (a bounce's status code, its source) is stored beside the recipients.
 */
export async function recordEventOnMessage(
  db: Sequelize,
  suppress: Suppress,
  found: EventMessage,
  notificationId: string,
  event: ProviderEvent,
): Promise<RecordOutcome> {
  const { workspaceId, messageId } = found;
  const named = event.type === 'bounce' || event.type === 'complaint' ? recipientsOfMessage(event.recipients, found.recipients) : null;
  if (named && named.matched.length === 0 && named.foreign.length > 0) return 'foreign-recipients';
  const at = event.at ?? new Date();
  const hardBounce = event.type === 'bounce' && event.bounceType === 'hard';
  const recipients = named
    ? { recipients: named.matched, ...(named.foreign.length > 0 && { ignoredRecipients: named.foreign }) }
    : 'recipients' in event ? { recipients: event.recipients } : {};
  return db.transaction(async (transaction) => {
    const stored = await insertMessageEvent(db, workspaceId, messageId, {
      type: event.type,
      bounceType: event.type === 'bounce' ? event.bounceType : null,
      reason: event.type === 'bounce' ? event.detail : null,
      providerEventId: notificationId,
      data: { ...event.data, ...recipients },
      at,
    }, transaction);
    // A redelivered notification changes nothing the first one did not.
    if (!stored) return 'duplicate';
    const move = hardBounce ? HARD_BOUNCE_MOVE : MOVES[event.type];
    if (move) await moveStatus(db, workspaceId, messageId, move.from, move.to, transaction);
    await touchEngagement(db, workspaceId, messageId, { bounced: hardBounce, at }, transaction);
    if (hardBounce && named) await suppress(workspaceId, named.matched, 'hard_bounce', transaction);
    if (event.type === 'complaint' && named) await suppress(workspaceId, named.matched, 'complaint', transaction);
    return 'recorded';
  });
}

/** The event as stored in jsonb: its time as an ISO string. */
type Stored<E> = E extends { at: Date | null } ? Omit<E, 'at'> & { at: string | null } : never;

interface ParkedRow {
  provider: string;
  notification_id: string;
  event: Stored<ProviderEvent>;
}

const revive = (stored: Stored<ProviderEvent>): ProviderEvent => ({ ...stored, at: stored.at ? new Date(stored.at) : null }) as ProviderEvent;

/** How long an event waits for its message before the sweep drops it (SES's own retries are long over). */
export const PARKED_EVENT_LIFETIME_MS = 7 * 24 * 60 * 60 * 1000;

/**
 * Keeps an event whose provider message id no message has yet: SES can notify before the delivery
 * activity has recorded the id it answered, and a crash between the provider's answer and `recordSent`
 * leaves the id unrecorded until a retry or the reconciler records it. A redelivery is parked once. The
 * message may have been recorded while this was parking, so it is looked for once more at the end.
 */
export async function parkProviderEvent(
  db: Sequelize,
  suppress: Suppress,
  provider: string,
  notificationId: string,
  event: ProviderEvent,
): Promise<void> {
  await db.query(
    `INSERT INTO parked_provider_events (provider, notification_id, provider_message_id, event)
     VALUES ($1, $2, $3, $4) ON CONFLICT (provider, notification_id) DO NOTHING`,
    { bind: [provider, notificationId, event.providerMessageId, JSON.stringify(event)] },
  );
  await replayParkedEvents(db, suppress, provider, event.providerMessageId);
}

/**
 * Records the events parked for a provider message id, oldest first, once a message has that id; call it
 * right after the id is recorded. Each is recorded through `recordProviderEvent` (idempotent by
 * notification id) and then unparked. Returns how many were recorded.
 */
export async function replayParkedEvents(db: Sequelize, suppress: Suppress, provider: string, providerMessageId: string): Promise<number> {
  const rows = await db.query<ParkedRow>(
    `SELECT provider, notification_id, event FROM parked_provider_events
     WHERE provider = $1 AND provider_message_id = $2 ORDER BY received_at, notification_id`,
    { bind: [provider, providerMessageId], type: QueryTypes.SELECT },
  );
  return replay(db, suppress, rows);
}

/**
 * The periodic sweep: records up to `limit` parked events whose message now exists, and deletes events
 * that have waited longer than `lifetimeMs` (default 7 days) without one. Safe to run concurrently and
 * repeatedly: recording is idempotent by notification id.
 */
export async function matchParkedEvents(
  db: Sequelize,
  suppress: Suppress,
  options: { limit: number; lifetimeMs?: number },
): Promise<{ recorded: number; expired: number }> {
  const rows = await db.query<ParkedRow>(
    `SELECT p.provider, p.notification_id, p.event FROM parked_provider_events p
     WHERE EXISTS (SELECT 1 FROM messages m WHERE m.provider = p.provider AND m.provider_message_id = p.provider_message_id)
     ORDER BY p.received_at, p.notification_id
     LIMIT $1`,
    { bind: [options.limit], type: QueryTypes.SELECT },
  );
  const recorded = await replay(db, suppress, rows);
  const expired = await db.query(
    `DELETE FROM parked_provider_events p
     WHERE p.received_at < now() - make_interval(secs => $1 / 1000.0)
       AND NOT EXISTS (SELECT 1 FROM messages m WHERE m.provider = p.provider AND m.provider_message_id = p.provider_message_id)
     RETURNING p.notification_id`,
    { bind: [options.lifetimeMs ?? PARKED_EVENT_LIFETIME_MS], type: QueryTypes.SELECT },
  );
  return { recorded, expired: expired.length };
}

/**
 * How a parked event of each provider is recorded: SES notifications (the default) through
 * `recordProviderEvent`, Twilio statuses through their own recorder (whatsapp.ts, parkTwilioStatus).
 */
const RECORDERS: Record<string, (db: Sequelize, suppress: Suppress, row: ParkedRow) => Promise<RecordOutcome>> = {
  twilio: (db, _suppress, row) => replayTwilioStatus(db, row.event),
};

async function replay(db: Sequelize, suppress: Suppress, rows: ParkedRow[]): Promise<number> {
  let recorded = 0;
  for (const row of rows) {
    const recorder = RECORDERS[row.provider];
    const outcome = recorder
      ? await recorder(db, suppress, row)
      : await recordProviderEvent(db, suppress, row.provider, row.notification_id, revive(row.event));
    if (outcome === 'unknown-message') continue;
    if (outcome === 'recorded') recorded += 1;
    await db.query('DELETE FROM parked_provider_events WHERE provider = $1 AND notification_id = $2', { bind: [row.provider, row.notification_id] });
  }
  return recorded;
}

/**
 * The message a VERP return path names, by our own id alone: a bounce arrives with no workspace of its own,
 * and the token (whose MAC the MX verified) carries only the message id and the recipient's index. Returns
 * the recipients as stored and, in envelope order, as addresses.
 */
export async function findReturnPathMessage(
  db: Sequelize,
  messageId: string,
): Promise<(EventMessage & { to: string[]; cc: string[]; bcc: string[]; provider: string | null; providerMessageId: string | null }) | null> {
  const rows = await db.query<{
    id: string; workspace_id: string; to_addresses: string[]; cc_addresses: string[]; bcc_addresses: string[]; provider: string | null; provider_message_id: string | null;
  }>(
    'SELECT id, workspace_id, to_addresses, cc_addresses, bcc_addresses, provider, provider_message_id FROM messages WHERE id = $1',
    { bind: [messageId], type: QueryTypes.SELECT },
  );
  const row = rows[0];
  if (!row) return null;
  return {
    workspaceId: row.workspace_id,
    messageId: row.id,
    recipients: [...row.to_addresses, ...row.cc_addresses, ...row.bcc_addresses],
    to: row.to_addresses,
    cc: row.cc_addresses,
    bcc: row.bcc_addresses,
    provider: row.provider,
    providerMessageId: row.provider_message_id,
  };
}
