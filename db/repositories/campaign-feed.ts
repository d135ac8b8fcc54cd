import { QueryTypes, type Sequelize } from 'sequelize';
import { CAMPAIGN_SKIP_REASONS } from '../../core/campaign-channels';
import type { CampaignStatus } from '../../core/campaigns';
import { releaseQuota } from './usage';
import { SERVICE_WINDOW_MS } from './whatsapp';

/**
 * How a sending campaign fills the outbox (the messages table) from its recipients, a page at a time,
 * and how it learns where it stands. Every write here is one statement guarded by the campaign's status,
 * so a pause or cancel committed first stops it, and one committed after waits for it.
 */

export interface FeedState {
  status: CampaignStatus;
  recipientCount: number;
  materialized: number;
  /** Messages of the campaign not yet sent (waiting in the outbox, in flight, or with the provider now). */
  outstanding: number;
  /** Whether the campaign already paused itself once. */
  autoPaused: boolean;
  /** Whether each recipient has a moment of their own (a local send time): the feed writes only those due. */
  localTime: boolean;
  /** Whether its WhatsApp recipients need the 24-hour window at their turn (free-form WhatsApp content). */
  whatsappWindow: boolean;
  sent: number;
  hardBounces: number;
  complaints: number;
}

/** One read per round of the feed: the campaign, its unsent messages (a small partial index), its counters. */
export async function readFeedState(db: Sequelize, workspaceId: string, campaignId: string): Promise<FeedState | null> {
  const rows = await db.query<{
    status: CampaignStatus; recipient_count: number | null; materialized: number; auto_paused: boolean; local_time: boolean; whatsapp_window: boolean;
    outstanding: string; sent: string | null; hard_bounces: string | null; complaints: string | null;
  }>(
    `SELECT c.status, c.recipient_count, c.materialized, c.auto_paused_at IS NOT NULL AS auto_paused,
       c.send_at_local_time IS NOT NULL AS local_time,
       COALESCE(c.message_chat ? 'whatsapp' AND NOT (c.message_chat -> 'whatsapp' ? 'contentSid'), false) AS whatsapp_window,
       (SELECT count(*) FROM messages m WHERE m.workspace_id = $1 AND m.campaign_id = $2 AND m.status IN ('queued', 'sending')) AS outstanding,
       k.sent, k.hard_bounces, k.complaints
     FROM campaigns c
     LEFT JOIN (SELECT sum(sent) AS sent, sum(hard_bounces) AS hard_bounces, sum(complaints) AS complaints
                FROM campaign_counters WHERE campaign_id = $2) k ON true
     WHERE c.workspace_id = $1 AND c.id = $2`,
    { bind: [workspaceId, campaignId], type: QueryTypes.SELECT },
  );
  const row = rows[0];
  if (!row) return null;
  return {
    status: row.status,
    recipientCount: row.recipient_count ?? 0,
    materialized: row.materialized,
    outstanding: Number(row.outstanding),
    autoPaused: row.auto_paused,
    localTime: row.local_time,
    whatsappWindow: row.whatsapp_window,
    sent: Number(row.sent ?? 0),
    hardBounces: Number(row.hard_bounces ?? 0),
    complaints: Number(row.complaints ?? 0),
  };
}

/**
 * How far recipients (after, upTo] are due: the snapshot numbered them by their `send_after`, so the due
 * ones come first. `upTo` is the last due position (`after` when none is), `nextAt` when the first one not
 * yet due will be. One scan of at most a page of the recipients' primary key.
 */
export async function dueRecipients(
  db: Sequelize,
  campaignId: string,
  range: { after: number; upTo: number },
): Promise<{ upTo: number; nextAt: Date | null }> {
  const [row] = await db.query<{ up_to: number | null; next_at: Date | null }>(
    `SELECT max(position) FILTER (WHERE send_after IS NULL OR send_after <= now()) AS up_to,
       min(send_after) FILTER (WHERE send_after > now()) AS next_at
     FROM campaign_recipients WHERE campaign_id = $1 AND position > $2 AND position <= $3`,
    { bind: [campaignId, range.after, range.upTo], type: QueryTypes.SELECT },
  );
  return { upTo: row.up_to ?? range.after, nextAt: row.next_at };
}

/**
 * Writes the messages of recipients (after, upTo] to the outbox, if the campaign is still sending, and
 * moves its `materialized` mark, in one statement. Each message's id is derived from the campaign and the
 * contact, so a page written twice (a retried activity, a rewind after a pause) inserts nothing twice.
 * Campaign messages are priority 3 (the lowest: their kind, migration 0010) and carry one unit of the
 * quota the snapshot reserved. Each goes on the channel the snapshot chose for its recipient, with that
 * channel's frozen content (email: `message_content`; WhatsApp, Telegram: `message_chat`); a recipient
 * skipped at its turn (`skip_reason`, skipOutsideWindow) gets none. Every message gets its contact as
 * variables, for a template and for the campaign's own subject, html and text alike (activities/email-render.ts
 * and chat-render.ts render both): `contact.*` (its attributes, `id`, and on email `email`) and each attribute
 * by its own name (`first_name`), as a send's `variables` would name it. Returns whether the campaign was
 * sending, and how many were new.
 */
export async function writePage(
  db: Sequelize,
  workspaceId: string,
  campaignId: string,
  range: { after: number; upTo: number },
): Promise<{ sending: boolean; written: number; writtenByChannel: Record<string, number> }> {
  const [result] = await db.query<{ sending: string; written: string; by_channel: Record<string, string> }>(
    `WITH campaign AS (
       UPDATE campaigns SET materialized = GREATEST(materialized, $4), updated_at = now()
       WHERE workspace_id = $1 AND id = $2 AND status = 'sending'
       RETURNING id, workspace_id, message_from, message_subject, message_content, message_chat, template_id, quota_period
     ),
     page AS (
       SELECT r.contact_id, r.address, r.channel FROM campaign_recipients r
       WHERE r.campaign_id = $2 AND r.position > $3 AND r.position <= $4 AND r.skip_reason IS NULL
     ),
     written AS (
       INSERT INTO messages (id, workspace_id, kind, channel, status, idempotency_key, request_hash, from_address, to_addresses,
         subject, content, template_id, campaign_id, contact_id, quota_units, quota_period)
       SELECT campaign_message_id(k.id, p.contact_id), k.workspace_id, 'campaign', p.channel, 'queued',
         'campaign:' || k.id || ':' || p.contact_id, 'campaign',
         CASE WHEN p.channel = 'email' THEN k.message_from END, ARRAY[p.address],
         CASE WHEN p.channel = 'email' THEN k.message_subject END,
         f.content || jsonb_build_object('variables', COALESCE(c.attributes, '{}'::jsonb) || jsonb_build_object('contact',
           COALESCE(c.attributes, '{}'::jsonb) || jsonb_build_object('id', p.contact_id)
             || CASE WHEN p.channel = 'email' THEN jsonb_build_object('email', p.address) ELSE '{}'::jsonb END)),
         k.template_id, k.id, p.contact_id, 1, k.quota_period
       FROM campaign k CROSS JOIN page p
       CROSS JOIN LATERAL (SELECT CASE WHEN p.channel = 'email' THEN k.message_content ELSE k.message_chat -> p.channel END AS content) f
       LEFT JOIN contacts c ON c.workspace_id = k.workspace_id AND c.id = p.contact_id
       ON CONFLICT (id) DO NOTHING
       RETURNING channel
     )
     SELECT (SELECT count(*) FROM campaign) AS sending, (SELECT count(*) FROM written) AS written,
       (SELECT COALESCE(jsonb_object_agg(channel, n), '{}'::jsonb) FROM (SELECT channel, count(*) AS n FROM written GROUP BY channel) c) AS by_channel`,
    { bind: [workspaceId, campaignId, range.after, range.upTo], type: QueryTypes.SELECT },
  );
  const writtenByChannel = Object.fromEntries(Object.entries(result.by_channel).map(([channel, n]) => [channel, Number(n)]));
  return { sending: Number(result.sending) === 1, written: Number(result.written), writtenByChannel };
}

/**
 * WhatsApp's 24-hour window at the moment a recipient's turn comes (the customer may have written since the
 * campaign started): a campaign whose WhatsApp content is free-form (no content template, `contentSid`)
 * skips the WhatsApp recipients of (after, upTo] who have not written within 24 hours, as POST /messages
 * refuses such a send, and gives their quota units back, in one transaction. The reason stays on the
 * recipient (`skip_reason`), counted in the campaign's detail. A recipient whose message was already written
 * (a rewind after a pause) is left alone. Nothing happens unless the campaign is sending. Returns how many.
 */
export async function skipOutsideWindow(db: Sequelize, workspaceId: string, campaignId: string, range: { after: number; upTo: number }): Promise<number> {
  return db.transaction(async (transaction) => {
    const [result] = await db.query<{ skipped: string; quota_period: string | null; started_at: Date | null }>(
      `WITH campaign AS (
         SELECT id, quota_period, started_at FROM campaigns
         WHERE workspace_id = $1 AND id = $2 AND status = 'sending' AND message_chat ? 'whatsapp' AND NOT (message_chat -> 'whatsapp' ? 'contentSid')
       ),
       skipped AS (
         UPDATE campaign_recipients r SET skip_reason = $6
         FROM campaign k
         WHERE r.campaign_id = k.id AND r.position > $3 AND r.position <= $4 AND r.channel = 'whatsapp' AND r.skip_reason IS NULL
           AND NOT EXISTS (SELECT 1 FROM whatsapp_sessions s
                           WHERE s.workspace_id = $1 AND s.phone = r.address AND s.last_inbound_at > now() - $5 * interval '1 millisecond')
           AND NOT EXISTS (SELECT 1 FROM messages m WHERE m.workspace_id = $1 AND m.id = campaign_message_id(k.id, r.contact_id))
         RETURNING 1
       )
       SELECT (SELECT count(*) FROM skipped) AS skipped, (SELECT quota_period FROM campaign) AS quota_period, (SELECT started_at FROM campaign) AS started_at`,
      { bind: [workspaceId, campaignId, range.after, range.upTo, SERVICE_WINDOW_MS, CAMPAIGN_SKIP_REASONS.whatsappWindow], type: QueryTypes.SELECT, transaction },
    );
    const skipped = Number(result.skipped);
    if (skipped > 0 && result.quota_period) {
      // Given back from the day the snapshot reserved them on (the send's start), as a cancel does.
      await releaseQuota(db, workspaceId, result.quota_period, skipped, { channel: 'whatsapp', kind: 'campaign', at: result.started_at }, transaction);
    }
    return skipped;
  });
}

/** How many of the campaign's recipients were skipped at their turn, by reason. */
export async function skippedRecipients(db: Sequelize, workspaceId: string, campaignId: string): Promise<Record<string, number>> {
  const rows = await db.query<{ skip_reason: string; n: string }>(
    `SELECT skip_reason, count(*) AS n FROM campaign_recipients
     WHERE campaign_id = $2 AND skip_reason IS NOT NULL AND workspace_id = $1 GROUP BY skip_reason`,
    { bind: [workspaceId, campaignId], type: QueryTypes.SELECT },
  );
  return Object.fromEntries(rows.map((row) => [row.skip_reason, Number(row.n)]));
}

/** Sending → sent once every recipient's message is written and none is left unsent. */
export async function completeCampaign(db: Sequelize, workspaceId: string, campaignId: string): Promise<boolean> {
  const rows = await db.query(
    `UPDATE campaigns SET status = 'sent', completed_at = now(), updated_at = now()
     WHERE workspace_id = $1 AND id = $2 AND status = 'sending' AND materialized >= recipient_count
       AND NOT EXISTS (SELECT 1 FROM messages m WHERE m.workspace_id = $1 AND m.campaign_id = $2 AND m.status IN ('queued', 'sending'))
     RETURNING id`,
    { bind: [workspaceId, campaignId], type: QueryTypes.SELECT },
  );
  return rows.length === 1;
}

/**
 * Takes a paused campaign's waiting messages back out of the outbox, so a pause stops sending within
 * seconds rather than after the window drains: messages still `queued` are deleted (a delivery that finds
 * its message gone stands down; one already claimed goes on) and the campaign's mark goes back to just
 * before the first of them. Resuming writes them again under the same ids; their quota units stay
 * reserved meanwhile. Returns the new mark, or null when the campaign is no longer paused.
 */
export async function holdWaitingMessages(db: Sequelize, workspaceId: string, campaignId: string): Promise<number | null> {
  return db.transaction(async (transaction) => {
    const [campaign] = await db.query<{ materialized: number }>(
      `SELECT materialized FROM campaigns WHERE workspace_id = $1 AND id = $2 AND status = 'paused' FOR UPDATE`,
      { bind: [workspaceId, campaignId], type: QueryTypes.SELECT, transaction },
    );
    if (!campaign) return null;
    const [held] = await db.query<{ first: number | null }>(
      `WITH held AS (
         DELETE FROM messages WHERE workspace_id = $1 AND campaign_id = $2 AND status = 'queued' RETURNING contact_id
       )
       SELECT min(r.position) AS first FROM campaign_recipients r
       WHERE r.campaign_id = $2 AND r.contact_id IN (SELECT contact_id FROM held)`,
      { bind: [workspaceId, campaignId], type: QueryTypes.SELECT, transaction },
    );
    if (held.first === null) return campaign.materialized;
    const mark = Math.min(campaign.materialized, held.first - 1);
    await db.query('UPDATE campaigns SET materialized = $3, updated_at = now() WHERE workspace_id = $1 AND id = $2', {
      bind: [workspaceId, campaignId, mark],
      transaction,
    });
    return mark;
  });
}
