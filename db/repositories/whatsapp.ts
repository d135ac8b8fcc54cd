import { QueryTypes, type Sequelize } from 'sequelize';
import { twilioError } from '../../core/chat-refusals';
import { type ChatStatusEvent, chatStatusEvent } from '../../core/delivery';
import { insertMessageEvent, touchEngagement } from './message-events';
import { startFallback } from './message-fallback';
import { findByProviderMessageId, type MessageStatus, moveStatus } from './messages';
import { suppressRefusedRecipient } from './suppressions';

/** A workspace's Twilio account, its auth token still sealed (core/secrets.ts). */
export interface TwilioIntegration {
  workspaceId: string;
  accountSid: string;
  authTokenSealed: string;
  /** E.164, without the `whatsapp:` prefix. */
  whatsappFrom: string;
  createdAt: Date;
  updatedAt: Date;
}

interface IntegrationRow {
  workspace_id: string;
  account_sid: string;
  auth_token_sealed: string;
  whatsapp_from: string;
  created_at: Date;
  updated_at: Date;
}

const toIntegration = (row: IntegrationRow): TwilioIntegration => ({
  workspaceId: row.workspace_id,
  accountSid: row.account_sid,
  authTokenSealed: row.auth_token_sealed,
  whatsappFrom: row.whatsapp_from,
  createdAt: row.created_at,
  updatedAt: row.updated_at,
});

/** Creates the workspace's integration or replaces its credentials (it keeps its creation time). */
export async function saveTwilioIntegration(
  db: Sequelize,
  workspaceId: string,
  input: { accountSid: string; authTokenSealed: string; whatsappFrom: string },
): Promise<TwilioIntegration> {
  const rows = await db.query<IntegrationRow>(
    `INSERT INTO twilio_integrations (workspace_id, account_sid, auth_token_sealed, whatsapp_from) VALUES ($1, $2, $3, $4)
     ON CONFLICT (workspace_id) DO UPDATE SET account_sid = EXCLUDED.account_sid, auth_token_sealed = EXCLUDED.auth_token_sealed,
       whatsapp_from = EXCLUDED.whatsapp_from, updated_at = now()
     RETURNING *`,
    { bind: [workspaceId, input.accountSid, input.authTokenSealed, input.whatsappFrom], type: QueryTypes.SELECT },
  );
  return toIntegration(rows[0]);
}

export async function findTwilioIntegration(db: Sequelize, workspaceId: string): Promise<TwilioIntegration | null> {
  const rows = await db.query<IntegrationRow>('SELECT * FROM twilio_integrations WHERE workspace_id = $1', {
    bind: [workspaceId],
    type: QueryTypes.SELECT,
  });
  return rows[0] ? toIntegration(rows[0]) : null;
}

export async function deleteTwilioIntegration(db: Sequelize, workspaceId: string): Promise<boolean> {
  const rows = await db.query('DELETE FROM twilio_integrations WHERE workspace_id = $1 RETURNING workspace_id', {
    bind: [workspaceId],
    type: QueryTypes.SELECT,
  });
  return rows.length === 1;
}

/** WhatsApp's customer-service window: free-form messages only within 24 hours of the customer's last one. */
export const SERVICE_WINDOW_MS = 24 * 60 * 60 * 1000;

/** Opens or extends the phone's window; an inbound message delivered late never shortens it. */
export async function recordInbound(db: Sequelize, workspaceId: string, phone: string, at: Date): Promise<void> {
  await db.query(
    `INSERT INTO whatsapp_sessions (workspace_id, phone, last_inbound_at) VALUES ($1, $2, $3)
     ON CONFLICT (workspace_id, phone) DO UPDATE SET last_inbound_at = GREATEST(whatsapp_sessions.last_inbound_at, EXCLUDED.last_inbound_at)`,
    { bind: [workspaceId, phone, at] },
  );
}

export async function insideServiceWindow(db: Sequelize, workspaceId: string, phone: string, now: Date): Promise<boolean> {
  const rows = await db.query<{ last_inbound_at: Date }>(
    'SELECT last_inbound_at FROM whatsapp_sessions WHERE workspace_id = $1 AND phone = $2',
    { bind: [workspaceId, phone], type: QueryTypes.SELECT },
  );
  const last = rows[0]?.last_inbound_at;
  return last !== undefined && now.getTime() - last.getTime() < SERVICE_WINDOW_MS;
}

/** Which statuses a Twilio status may move a message from; later facts never undo earlier ones. */
const MOVES: Partial<Record<ChatStatusEvent['type'], { from: MessageStatus[]; to: MessageStatus }>> = {
  sent: { from: ['sending'], to: 'sent' },
  delivered: { from: ['sending', 'sent'], to: 'delivered' },
  failed: { from: ['sending', 'sent'], to: 'failed' },
};

/**
 * Records a status callback on the workspace's message with that MessageSid: the event once per
 * (message, status) (a retried callback repeats it), the status move and the engagement summary, in one
 * transaction. The event id `<status>:<sid>` makes Twilio's `sent` the same event as the one the send path
 * stores when Twilio accepts the message (`sent:<provider id>`, message-delivery.ts), so it is not doubled. A SID of another workspace's message counts as unknown: the
 * callback URL names the workspace whose token signed it, and nothing else may be touched through it.
 *
 * A `failed`/`undelivered` status names its ErrorCode: the `failed` event's reason says what it means, and a
 * code that is the recipient's lasting state (21610 STOP, 63003 not on WhatsApp, ...: core/chat-refusals.ts)
 * suppresses the number in the same transaction, whatever the message's status was by then.
 */
export async function recordTwilioStatus(
  db: Sequelize,
  workspaceId: string,
  messageSid: string,
  status: string,
  event: ChatStatusEvent,
  at: Date,
  errorCode: number | null = null,
): Promise<'recorded' | 'duplicate' | 'unknown-message'> {
  const found = await findByProviderMessageId(db, 'twilio', messageSid);
  if (!found || found.workspaceId !== workspaceId) return 'unknown-message';
  const { messageId } = found;
  const failure = event.type === 'failed' ? failureOf(status, errorCode) : null;
  return db.transaction(async (transaction) => {
    const stored = await insertMessageEvent(
      db,
      workspaceId,
      messageId,
      {
        type: event.type,
        classification: event.classification,
        reason: failure?.reason,
        providerEventId: `${status}:${messageSid}`,
        data: { status, ...(errorCode !== null && { errorCode }) },
        at,
      },
      transaction,
    );
    if (!stored) return 'duplicate';
    const move = MOVES[event.type];
    const moved = move ? await moveStatus(db, workspaceId, messageId, move.from, move.to, transaction) : false;
    // A chat message has one recipient; Twilio carries only this service's WhatsApp messages.
    const recipient = found.recipients[0];
    if (failure?.suppress && recipient) {
      await suppressRefusedRecipient(db, workspaceId, { channel: 'whatsapp', address: recipient, reason: failure.suppress, detail: failure.detail, messageId }, transaction);
    }
    // Undeliverable after Twilio took it (a number not on WhatsApp, an expired window): the next channel.
    if (moved && move?.to === 'failed') await startFallback(db, workspaceId, messageId, failure?.reason ?? `Twilio reported the message ${status}`, transaction);
    if (event.type === 'open') {
      await db.query('UPDATE messages SET opens_human = opens_human + 1 WHERE workspace_id = $1 AND id = $2', {
        bind: [workspaceId, messageId],
        transaction,
      });
    }
    await touchEngagement(db, workspaceId, messageId, { at }, transaction);
    return 'recorded';
  });
}

/** What a failed status with this ErrorCode says, for the event's reason and the suppression. */
function failureOf(status: string, errorCode: number | null) {
  const known = twilioError(errorCode);
  const detail = `Twilio reported the message ${status}${errorCode !== null ? ` (error ${errorCode})` : ''}`;
  return { reason: known ? `${detail}: ${known.meaning}` : detail, detail, suppress: known?.suppress ?? null };
}

/** A Twilio status kept until its message has the SID (parked_provider_events, provider `twilio`). */
interface ParkedTwilioStatus {
  workspaceId: string;
  messageSid: string;
  status: string;
  at: string;
  /** A failed status's ErrorCode (absent on statuses parked before it was kept). */
  errorCode?: number | null;
}

/**
 * Keeps a status whose SID no message has yet. Twilio can call back before the delivery activity has
 * recorded the SID it answered (a fast `sent` or `failed`), and a crash between Twilio's answer and the
 * record leaves it unrecorded until a retry or the reconciler: the status is parked (once per status and
 * SID and workspace) and recorded when the SID is (delivery.ts replays parked events right after
 * recording a send; the reconciler's sweep also matches them). The message may have been recorded while
 * this was parking, so it is looked for once more at the end.
 */
export async function parkTwilioStatus(
  db: Sequelize,
  workspaceId: string,
  messageSid: string,
  status: string,
  at: Date,
  errorCode: number | null = null,
): Promise<void> {
  const parked: ParkedTwilioStatus = { workspaceId, messageSid, status, at: at.toISOString(), errorCode };
  // Named by workspace too: another workspace signing a status for this SID must not take its place.
  const notificationId = `${workspaceId}:${status}:${messageSid}`;
  await db.query(
    `INSERT INTO parked_provider_events (provider, notification_id, provider_message_id, event)
     VALUES ('twilio', $1, $2, $3) ON CONFLICT (provider, notification_id) DO NOTHING`,
    { bind: [notificationId, messageSid, JSON.stringify(parked)] },
  );
  const outcome = await replayTwilioStatus(db, parked);
  if (outcome !== 'unknown-message') {
    await db.query("DELETE FROM parked_provider_events WHERE provider = 'twilio' AND notification_id = $1", { bind: [notificationId] });
  }
}

/** Records a parked Twilio status on its message, if one has its SID now (provider-events.ts replays). */
export async function replayTwilioStatus(db: Sequelize, stored: unknown): Promise<'recorded' | 'duplicate' | 'unknown-message'> {
  const parked = stored as ParkedTwilioStatus;
  const event = chatStatusEvent(parked.status);
  // Only statuses that are events are ever parked; anything else is nothing to record.
  if (!event) return 'duplicate';
  return recordTwilioStatus(db, parked.workspaceId, parked.messageSid, parked.status, event, new Date(parked.at), parked.errorCode ?? null);
}
