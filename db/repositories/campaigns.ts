import { randomUUID } from 'node:crypto';
import { QueryTypes, type Sequelize, type Transaction } from 'sequelize';
import type { AttachmentRef } from '../../core/attachments';
import type { CampaignStatus } from '../../core/campaigns';
import type { Channel } from '../../core/identities';

/** What a draft says; every field but the name may still be missing until it is sent. */
export interface CampaignDraft {
  name: string;
  listId: string | null;
  segmentId: string | null;
  fromAddress: string | null;
  subject: string | null;
  html: string | null;
  text: string | null;
  templateId: string | null;
  replyTo: string[];
  attachments: AttachmentRef[];
  disableTracking: boolean;
  disableUtm: boolean;
  /** "HH:MM": each recipient gets it at that time of day in their own zone; null sends to all at once. */
  sendAtLocalTime: string | null;
  /** Percent (0–50) of the audience held out of the send, to measure lift against (core/campaign-holdout.ts). */
  holdoutPercent: number;
  /** The preferred channel; `fallbackChain` the ones tried after it (core/campaign-channels.ts). */
  channel: Channel;
  fallbackChain: Channel[];
  /** A WhatsApp content template (Twilio's `HX…`) and its variables, as POST /messages takes them. */
  contentSid: string | null;
  contentVariables: Record<string, string> | null;
}

export interface CampaignRecord extends CampaignDraft {
  id: string;
  workspaceId: string;
  status: CampaignStatus;
  revision: number;
  scheduledAt: Date | null;
  /** Set by the audience snapshot; null before it. */
  recipientCount: number | null;
  /** Recipients whose message has been written to the outbox. */
  materialized: number;
  canceledCount: number;
  /** Members no channel of the campaign reached, counted at the snapshot; null before it. */
  unreachableCount: number | null;
  pausedReason: string | null;
  failureReason: string | null;
  startedAt: Date | null;
  completedAt: Date | null;
  createdAt: Date;
  updatedAt: Date;
}

export interface CampaignRow {
  id: string;
  workspace_id: string;
  name: string;
  status: CampaignStatus;
  list_id: string | null;
  segment_id: string | null;
  from_address: string | null;
  subject: string | null;
  html: string | null;
  text: string | null;
  template_id: string | null;
  reply_to: string[];
  attachments: AttachmentRef[];
  disable_tracking: boolean;
  disable_utm: boolean;
  send_at_local_time: string | null;
  holdout_percent: number;
  channel: Channel;
  fallback_chain: Channel[];
  content_sid: string | null;
  content_variables: Record<string, string> | null;
  unreachable_count: number | null;
  revision: number;
  scheduled_at: Date | null;
  recipient_count: number | null;
  materialized: number;
  canceled_count: number;
  paused_reason: string | null;
  failure_reason: string | null;
  started_at: Date | null;
  completed_at: Date | null;
  created_at: Date;
  updated_at: Date;
}

/** Every column a read needs; the frozen message content stays out (it can be a whole HTML body). */
export const CAMPAIGN_COLUMNS = `id, workspace_id, name, status, list_id, segment_id, from_address, subject, html, text, template_id,
  reply_to, attachments, disable_tracking, disable_utm, send_at_local_time, holdout_percent, channel, fallback_chain, content_sid, content_variables, unreachable_count,
  revision, scheduled_at, recipient_count, materialized, canceled_count, paused_reason, failure_reason, started_at, completed_at, created_at, updated_at`;

export function toCampaign(row: CampaignRow): CampaignRecord {
  return {
    id: row.id,
    workspaceId: row.workspace_id,
    name: row.name,
    status: row.status,
    listId: row.list_id,
    segmentId: row.segment_id,
    fromAddress: row.from_address,
    subject: row.subject,
    html: row.html,
    text: row.text,
    templateId: row.template_id,
    replyTo: row.reply_to,
    attachments: row.attachments,
    disableTracking: row.disable_tracking,
    disableUtm: row.disable_utm,
    // PostgreSQL answers a time as HH:MM:SS; minutes are what was given.
    sendAtLocalTime: row.send_at_local_time?.slice(0, 5) ?? null,
    holdoutPercent: row.holdout_percent,
    channel: row.channel,
    fallbackChain: row.fallback_chain,
    contentSid: row.content_sid,
    contentVariables: row.content_variables,
    unreachableCount: row.unreachable_count,
    revision: row.revision,
    scheduledAt: row.scheduled_at,
    recipientCount: row.recipient_count,
    materialized: row.materialized,
    canceledCount: row.canceled_count,
    pausedReason: row.paused_reason,
    failureReason: row.failure_reason,
    startedAt: row.started_at,
    completedAt: row.completed_at,
    createdAt: row.created_at,
    updatedAt: row.updated_at,
  };
}

/**
 * Takes the template row FOR SHARE until the transaction ends, so DELETE /templates/:id (which locks it
 * FOR UPDATE before asking whether a campaign uses it) cannot slip between this check and the write.
 * False when the template is gone.
 */
async function shareTemplate(db: Sequelize, workspaceId: string, templateId: string | null, transaction: Transaction): Promise<boolean> {
  if (templateId === null) return true;
  const rows = await db.query('SELECT id FROM templates WHERE workspace_id = $1 AND id = $2 AND deleted_at IS NULL FOR SHARE', {
    bind: [workspaceId, templateId],
    type: QueryTypes.SELECT,
    transaction,
  });
  return rows.length === 1;
}

/** Thrown when a draft names a template deleted between its lookup and the write. */
export class CampaignTemplateGone extends Error {}

export async function insertCampaign(db: Sequelize, workspaceId: string, draft: CampaignDraft): Promise<CampaignRecord> {
  return db.transaction(async (transaction) => {
    if (!(await shareTemplate(db, workspaceId, draft.templateId, transaction))) throw new CampaignTemplateGone();
    const rows = await db.query<CampaignRow>(
      `INSERT INTO campaigns (id, workspace_id, name, list_id, segment_id, from_address, subject, html, text, template_id, reply_to,
         attachments, disable_tracking, disable_utm, send_at_local_time, holdout_percent, channel, fallback_chain, content_sid, content_variables)
       VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $16, $17, $18, $19, $20) RETURNING ${CAMPAIGN_COLUMNS}`,
      {
        bind: [
          randomUUID(), workspaceId, draft.name, draft.listId, draft.segmentId, draft.fromAddress, draft.subject, draft.html, draft.text,
          draft.templateId, draft.replyTo, JSON.stringify(draft.attachments), draft.disableTracking, draft.disableUtm, draft.sendAtLocalTime,
          draft.holdoutPercent, draft.channel, draft.fallbackChain, draft.contentSid, draft.contentVariables && JSON.stringify(draft.contentVariables),
        ],
        type: QueryTypes.SELECT,
        transaction,
      },
    );
    return toCampaign(rows[0]);
  });
}

export async function findCampaign(db: Sequelize, workspaceId: string, campaignId: string, transaction?: Transaction): Promise<CampaignRecord | null> {
  const rows = await db.query<CampaignRow>(`SELECT ${CAMPAIGN_COLUMNS} FROM campaigns WHERE workspace_id = $1 AND id = $2`, {
    bind: [workspaceId, campaignId],
    type: QueryTypes.SELECT,
    transaction,
  });
  return rows[0] ? toCampaign(rows[0]) : null;
}

/** Newest first; `total` counts them all so clients can page with limit and offset. */
export async function listCampaigns(
  db: Sequelize,
  workspaceId: string,
  page: { limit: number; offset: number },
): Promise<{ rows: CampaignRecord[]; total: number }> {
  const [rows, counted] = await Promise.all([
    db.query<CampaignRow>(
      `SELECT ${CAMPAIGN_COLUMNS} FROM campaigns WHERE workspace_id = $1 ORDER BY created_at DESC, id DESC LIMIT $2 OFFSET $3`,
      { bind: [workspaceId, page.limit, page.offset], type: QueryTypes.SELECT },
    ),
    db.query<{ total: string }>('SELECT count(*) AS total FROM campaigns WHERE workspace_id = $1', { bind: [workspaceId], type: QueryTypes.SELECT }),
  ]);
  return { rows: rows.map(toCampaign), total: Number(counted[0].total) };
}

const DRAFT_COLUMNS: Record<keyof CampaignDraft, string> = {
  name: 'name',
  listId: 'list_id',
  segmentId: 'segment_id',
  fromAddress: 'from_address',
  subject: 'subject',
  html: 'html',
  text: 'text',
  templateId: 'template_id',
  replyTo: 'reply_to',
  attachments: 'attachments',
  disableTracking: 'disable_tracking',
  disableUtm: 'disable_utm',
  sendAtLocalTime: 'send_at_local_time',
  holdoutPercent: 'holdout_percent',
  channel: 'channel',
  fallbackChain: 'fallback_chain',
  contentSid: 'content_sid',
  contentVariables: 'content_variables',
};

export type DraftUpdate = { state: 'updated'; campaign: CampaignRecord } | { state: 'not-draft'; status: CampaignStatus } | { state: 'not-found' };

/**
 * Changes the fields given of a draft and moves its revision on, which voids every confirmation token
 * issued for the draft as it was. Only a draft changes: what was sent or scheduled stays as confirmed.
 */
export async function updateDraft(db: Sequelize, workspaceId: string, campaignId: string, change: Partial<CampaignDraft>): Promise<DraftUpdate> {
  return db.transaction(async (transaction) => {
    if (change.templateId !== undefined && !(await shareTemplate(db, workspaceId, change.templateId, transaction))) throw new CampaignTemplateGone();
    const sets: string[] = ['revision = revision + 1', 'updated_at = now()'];
    const bind: unknown[] = [workspaceId, campaignId];
    for (const [key, value] of Object.entries(change) as Array<[keyof CampaignDraft, unknown]>) {
      if (value === undefined) continue;
      bind.push((key === 'attachments' || key === 'contentVariables') && value !== null ? JSON.stringify(value) : value);
      sets.push(`${DRAFT_COLUMNS[key]} = $${bind.length}`);
    }
    const rows = await db.query<CampaignRow>(
      `UPDATE campaigns SET ${sets.join(', ')} WHERE workspace_id = $1 AND id = $2 AND status = 'draft' RETURNING ${CAMPAIGN_COLUMNS}`,
      { bind, type: QueryTypes.SELECT, transaction },
    );
    if (rows[0]) return { state: 'updated', campaign: toCampaign(rows[0]) };
    const existing = await findCampaign(db, workspaceId, campaignId, transaction);
    return existing ? { state: 'not-draft', status: existing.status } : { state: 'not-found' };
  });
}

export type DraftDeletion = { state: 'deleted' } | { state: 'not-draft'; status: CampaignStatus } | { state: 'not-found' };

/**
 * Deletes a draft. Only a draft goes: once sent or scheduled, a campaign's messages, metrics and
 * attribution name it. The status is checked in the delete itself, so a send racing it wins or loses whole.
 */
export async function deleteDraft(db: Sequelize, workspaceId: string, campaignId: string): Promise<DraftDeletion> {
  const rows = await db.query("DELETE FROM campaigns WHERE workspace_id = $1 AND id = $2 AND status = 'draft' RETURNING id", {
    bind: [workspaceId, campaignId],
    type: QueryTypes.SELECT,
  });
  if (rows.length === 1) return { state: 'deleted' };
  const existing = await findCampaign(db, workspaceId, campaignId);
  return existing ? { state: 'not-draft', status: existing.status } : { state: 'not-found' };
}
