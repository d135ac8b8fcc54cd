import type { Sequelize } from 'sequelize';
import type { z } from 'zod';
import { conversionLift, groupRate } from '../../core/campaign-holdout';
import { roundToCent } from '../../core/commerce/money';
import { AppError } from '../../core/errors';
import { campaignLiftCounts, type LiftGroupCounts } from '../../db/repositories/campaign-lift';
import { findCampaign } from '../../db/repositories/campaigns';
import { attributionWindowDays } from '../../db/repositories/conversions';
import type { CampaignLiftSchema } from './schemas';

const DAY_MS = 86_400_000;

type LiftGroup = z.infer<typeof CampaignLiftSchema>['sent'];

function groupView(counts: LiftGroupCounts): LiftGroup {
  const byCurrency = counts.byCurrency
    .map((row) => {
      const revenue = Number(row.revenue);
      return {
        currency: row.currency,
        orders: row.orders,
        revenue: roundToCent(revenue),
        // A group with an order has at least that recipient.
        revenuePerRecipient: roundToCent(revenue / counts.recipients),
      };
    })
    .sort((a, b) => b.revenue - a.revenue || a.currency.localeCompare(b.currency));
  return {
    recipients: counts.recipients,
    converters: counts.converters,
    conversions: counts.conversions,
    conversionRate: groupRate(counts.converters, counts.recipients),
    byCurrency,
  };
}

/**
 * CampaignLift: the conversions and revenue of the recipients sent to against those of the holdout, per
 * recipient, from the campaign's start through the workspace's attribution window (its current one, as the
 * other models on read use). Before the campaign starts there are no groups yet.
 */
export function createCampaignLift(db: Sequelize) {
  return {
    async report(workspaceId: string, campaignId: string, now: Date): Promise<z.infer<typeof CampaignLiftSchema>> {
      const campaign = await findCampaign(db, workspaceId, campaignId);
      if (!campaign) throw AppError.notFound('Campaign');
      const days = await attributionWindowDays(db, workspaceId);
      const from = campaign.startedAt;
      const window = from ? { from, until: new Date(from.getTime() + days * DAY_MS) } : null;
      const counts = window
        ? await campaignLiftCounts(db, workspaceId, campaignId, window)
        : { sent: { recipients: 0, converters: 0, conversions: 0, byCurrency: [] }, holdout: { recipients: 0, converters: 0, conversions: 0, byCurrency: [] } };
      const sent = groupView(counts.sent);
      const holdout = groupView(counts.holdout);
      return {
        campaignId,
        holdoutPercent: campaign.holdoutPercent,
        window: window && { from: window.from.toISOString(), until: window.until.toISOString(), days, complete: now >= window.until },
        sent,
        holdout,
        lift: conversionLift(sent.conversionRate, holdout.conversionRate),
      };
    },
  };
}

export type CampaignLift = ReturnType<typeof createCampaignLift>;
