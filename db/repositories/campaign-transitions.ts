import { QueryTypes, type Sequelize } from 'sequelize';
import type { Channel } from '../../core/identities';
import { CAMPAIGN_COLUMNS, type CampaignRecord, type CampaignRow, toCampaign } from './campaigns';
import { releaseQuota } from './usage';

/**
 * A campaign's moves between statuses. Each is one conditional write from the statuses it may leave, so
 * two requests (or a request and the campaign's workflow) racing for one campaign end with one winner,
 * and the loser learns the status it lost to (null: the move did not apply).
 */

/** What every message of the campaign carries, frozen when it is sent (the template version pinned). */
export interface FrozenMessage {
  /** The email's sender; null for a campaign without email among its channels. */
  from: string | null;
  subject: string | null;
  /** The email content (core/message-content.ts) without the per-recipient variables. */
  content: Record<string, unknown>;
  /** The content of each chat channel of the campaign (the same shape as a chat message's), or null. */
  chat: Record<string, unknown> | null;
}

/**
 * Draft → scheduled or sending, with the content frozen, only if the draft is still at the revision the
 * caller checked (an edit meanwhile voids the confirmation the caller accepted).
 */
export async function beginSend(
  db: Sequelize,
  workspaceId: string,
  campaignId: string,
  send: { revision: number; scheduledAt: Date | null; message: FrozenMessage },
): Promise<CampaignRecord | null> {
  const rows = await db.query<CampaignRow>(
    `UPDATE campaigns SET status = CASE WHEN $4::timestamptz IS NULL THEN 'sending' ELSE 'scheduled' END, scheduled_at = $4,
       message_from = $5, message_subject = $6, message_content = $7, message_chat = $8, updated_at = now()
     WHERE workspace_id = $1 AND id = $2 AND status = 'draft' AND revision = $3 RETURNING ${CAMPAIGN_COLUMNS}`,
    {
      bind: [
        workspaceId, campaignId, send.revision, send.scheduledAt, send.message.from, send.message.subject, JSON.stringify(send.message.content),
        send.message.chat && JSON.stringify(send.message.chat),
      ],
      type: QueryTypes.SELECT,
    },
  );
  return rows[0] ? toCampaign(rows[0]) : null;
}

/** Back to draft when its workflow could not be started: nothing was snapshotted or sent yet. */
export async function revertToDraft(db: Sequelize, workspaceId: string, campaignId: string): Promise<void> {
  await db.query(
    `UPDATE campaigns SET status = 'draft', scheduled_at = NULL, message_from = NULL, message_subject = NULL, message_content = NULL, message_chat = NULL, updated_at = now()
     WHERE workspace_id = $1 AND id = $2 AND status IN ('scheduled', 'sending') AND recipient_count IS NULL`,
    { bind: [workspaceId, campaignId] },
  );
}

/**
 * Sending → paused. A pause the campaign takes itself (`auto`) happens once: after someone resumes it,
 * they have looked at the rates and chosen to go on.
 */
export async function pauseCampaign(
  db: Sequelize,
  workspaceId: string,
  campaignId: string,
  pause: { reason: string | null; auto: boolean },
): Promise<CampaignRecord | null> {
  const rows = await db.query<CampaignRow>(
    `UPDATE campaigns SET status = 'paused', paused_reason = $3, auto_paused_at = CASE WHEN $4 THEN now() ELSE auto_paused_at END, updated_at = now()
     WHERE workspace_id = $1 AND id = $2 AND status = 'sending' AND (NOT $4 OR auto_paused_at IS NULL) RETURNING ${CAMPAIGN_COLUMNS}`,
    { bind: [workspaceId, campaignId, pause.reason, pause.auto], type: QueryTypes.SELECT },
  );
  return rows[0] ? toCampaign(rows[0]) : null;
}

export async function resumeCampaign(db: Sequelize, workspaceId: string, campaignId: string): Promise<CampaignRecord | null> {
  const rows = await db.query<CampaignRow>(
    `UPDATE campaigns SET status = 'sending', paused_reason = NULL, updated_at = now()
     WHERE workspace_id = $1 AND id = $2 AND status = 'paused' RETURNING ${CAMPAIGN_COLUMNS}`,
    { bind: [workspaceId, campaignId], type: QueryTypes.SELECT },
  );
  return rows[0] ? toCampaign(rows[0]) : null;
}

/**
 * Scheduled, sending or paused → canceled, in one transaction: the campaign's messages still waiting in
 * the outbox (or handed to Temporal but not claimed by a delivery: `queued`) become `canceled`, and the
 * quota units reserved for them and for the recipients never written to the outbox are given back.
 * Messages already with the provider are not taken back. The campaign row is taken first, so a page
 * being written waits for the cancel or is refused by it, never written after it.
 */
export async function cancelCampaign(db: Sequelize, workspaceId: string, campaignId: string): Promise<CampaignRecord | null> {
  return db.transaction(async (transaction) => {
    const [stopped] = await db.query<{ unwritten: number; materialized: number; quota_period: string | null; started_at: Date | null }>(
      `UPDATE campaigns SET status = 'canceled', completed_at = now(), updated_at = now()
       WHERE workspace_id = $1 AND id = $2 AND status IN ('scheduled', 'sending', 'paused')
       RETURNING GREATEST(0, COALESCE(recipient_count, 0) - materialized) AS unwritten, materialized, quota_period, started_at`,
      { bind: [workspaceId, campaignId], type: QueryTypes.SELECT, transaction },
    );
    if (!stopped) return null;
    // Units by channel, as the snapshot reserved them: the canceled messages', and the unwritten recipients'.
    const canceled = await db.query<{ channel: Channel; messages: string; units: string | null }>(
      `WITH canceled AS (
         UPDATE messages SET status = 'canceled', dispatch_lease_until = NULL, updated_at = now()
         WHERE workspace_id = $1 AND campaign_id = $2 AND status = 'queued'
         RETURNING channel, quota_units
       )
       SELECT channel, count(*) AS messages, sum(quota_units) AS units FROM canceled GROUP BY channel
       UNION ALL
       SELECT channel, 0, count(*) FROM campaign_recipients
       WHERE $3::int > 0 AND campaign_id = $2 AND position > $4 AND skip_reason IS NULL GROUP BY channel`,
      { bind: [workspaceId, campaignId, stopped.unwritten, stopped.materialized], type: QueryTypes.SELECT, transaction },
    );
    const units = new Map<Channel, number>();
    for (const row of canceled) units.set(row.channel, (units.get(row.channel) ?? 0) + Number(row.units ?? 0));
    if (stopped.quota_period) {
      // Given back from the day the snapshot reserved them on (the send's start).
      for (const [channel, count] of units) {
        await releaseQuota(db, workspaceId, stopped.quota_period, count, { channel, kind: 'campaign', at: stopped.started_at }, transaction);
      }
    }
    const canceledMessages = canceled.reduce((sum, row) => sum + Number(row.messages), 0);
    const rows = await db.query<CampaignRow>(
      `UPDATE campaigns SET canceled_count = $3 WHERE workspace_id = $1 AND id = $2 RETURNING ${CAMPAIGN_COLUMNS}`,
      { bind: [workspaceId, campaignId, canceledMessages + Number(stopped.unwritten)], type: QueryTypes.SELECT, transaction },
    );
    return toCampaign(rows[0]);
  });
}

/** The campaign could not start (its audience is gone, the quota ran out since it was scheduled). */
export async function failCampaign(db: Sequelize, workspaceId: string, campaignId: string, reason: string): Promise<void> {
  await db.query(
    `UPDATE campaigns SET status = 'failed', failure_reason = $3, completed_at = now(), updated_at = now()
     WHERE workspace_id = $1 AND id = $2 AND status IN ('scheduled', 'sending', 'paused') AND recipient_count IS NULL`,
    { bind: [workspaceId, campaignId, reason] },
  );
}
