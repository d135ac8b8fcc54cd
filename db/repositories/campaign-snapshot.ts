import { QueryTypes, type Sequelize } from 'sequelize';
import { campaignChannels } from '../../core/campaign-channels';
import type { CampaignStatus } from '../../core/campaigns';
import { CHANNELS, type Channel } from '../../core/identities';
import { isPlanName, periodKey, PLANS, quotaFigures, usagePeriodAt } from '../../core/plans';
import { resolveAudience, snapshotAudience } from './campaign-audience';
import { failCampaign } from './campaign-transitions';
import { reserveQuota, usedInPeriod } from './usage';

export type SnapshotOutcome =
  /** The recipients are written and their quota reserved: the campaign feeds the outbox from here. */
  | { state: 'ready'; recipients: number }
  /** Its send time is still ahead (the campaign was sent again with another time after a failed start). */
  | { state: 'waiting'; scheduledAt: Date }
  /** Nothing to send: canceled, back to draft, failed now (the reason is on the campaign), or done. */
  | { state: 'stopped'; status: CampaignStatus };

/** Why a campaign that was accepted cannot start after all; the campaign fails with it. */
class CannotStart extends Error {}

/**
 * The start of a campaign's send, all or nothing, in one transaction holding the campaign's row: the
 * audience is written to its recipients as it is now (who it reaches, numbered; its holdout marked apart),
 * the quota units of those it sends to are reserved in the current month, and the campaign becomes
 * `sending` (a paused one stays paused); `recipient_count` is the sent group only. A
 * retry after the commit finds it taken and answers the same; a cancel waits for it, and one committed
 * first stops it. When the plan no longer allows that many messages (other sends used the quota since it
 * was scheduled), or the list or segment is gone, the campaign fails with the reason and sends nothing.
 */
export async function takeSnapshot(db: Sequelize, workspaceId: string, campaignId: string, now: Date): Promise<SnapshotOutcome> {
  try {
    return await db.transaction(async (transaction): Promise<SnapshotOutcome> => {
      const [campaign] = await db.query<{
        status: CampaignStatus; scheduled_at: Date | null; recipient_count: number | null; list_id: string | null; segment_id: string | null; plan: string;
        send_at_local_time: string | null; timezone: string; holdout_percent: number; channel: Channel; fallback_chain: Channel[];
      }>(
        `SELECT c.status, c.scheduled_at, c.recipient_count, c.list_id, c.segment_id, w.plan, c.send_at_local_time, w.timezone, c.holdout_percent,
           c.channel, c.fallback_chain
         FROM campaigns c JOIN workspaces w ON w.id = c.workspace_id
         WHERE c.workspace_id = $1 AND c.id = $2 FOR UPDATE OF c`,
        { bind: [workspaceId, campaignId], type: QueryTypes.SELECT, transaction },
      );
      if (!campaign) return { state: 'stopped', status: 'canceled' };
      if (!['scheduled', 'sending', 'paused'].includes(campaign.status)) return { state: 'stopped', status: campaign.status };
      if (campaign.recipient_count !== null) return { state: 'ready', recipients: campaign.recipient_count };
      if (campaign.status === 'scheduled' && campaign.scheduled_at && campaign.scheduled_at > now) {
        return { state: 'waiting', scheduledAt: campaign.scheduled_at };
      }
      const audience = await resolveAudience(db, workspaceId, { listId: campaign.list_id, segmentId: campaign.segment_id }, now);
      if ('missing' in audience) throw new CannotStart(`the campaign's ${audience.missing} no longer exists`);
      const localTime = campaign.send_at_local_time ? { at: campaign.send_at_local_time, defaultZone: campaign.timezone, start: now } : null;
      // Held-out recipients are written too (the lift report's control group) but never sent to: they reserve no quota.
      const channels = campaignChannels(campaign.channel, campaign.fallback_chain);
      const { recipients, byChannel, unreachable } = await snapshotAudience(
        db, workspaceId, campaignId, audience.rules, audience.context, transaction, localTime, campaign.holdout_percent, channels,
      );
      const plan = PLANS[isPlanName(campaign.plan) ? campaign.plan : 'free'];
      const period = usagePeriodAt(now);
      // Reserved channel by channel, so usage shows each channel's share; any refusal undoes them all (the transaction).
      let reserved = 0;
      for (const channel of CHANNELS) {
        if (byChannel[channel] === 0) continue;
        if ((await reserveQuota(db, workspaceId, plan, period, byChannel[channel], { channel, kind: 'campaign' }, transaction)) === null) {
          const figures = quotaFigures(plan, await usedInPeriod(db, workspaceId, period));
          // The channels reserved before this one are given back with the transaction: they still remain.
          const remaining = figures.remaining + reserved;
          throw new CannotStart(`quota_exceeded: the campaign needs ${recipients} messages; ${remaining} remain this month`);
        }
        reserved += byChannel[channel];
      }
      await db.query(
        `UPDATE campaigns SET status = CASE status WHEN 'scheduled' THEN 'sending' ELSE status END, recipient_count = $3,
           quota_period = $4, unreachable_count = $5, started_at = now(), updated_at = now()
         WHERE workspace_id = $1 AND id = $2`,
        { bind: [workspaceId, campaignId, recipients, periodKey(period), unreachable], transaction },
      );
      return { state: 'ready', recipients };
    });
  } catch (error) {
    if (!(error instanceof CannotStart)) throw error;
    await failCampaign(db, workspaceId, campaignId, error.message);
    return { state: 'stopped', status: 'failed' };
  }
}
