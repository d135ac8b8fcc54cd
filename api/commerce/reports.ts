import type { Sequelize } from 'sequelize';
import { type AttributionModel, creditTouches, type Touch } from '../../core/attribution/models';
import { AppError } from '../../core/errors';
import { type CreditedOrder, revenueSummary, totalsOf } from '../../core/commerce/revenue-summary';
import { findAutomation } from '../../db/repositories/automations';
import { findCampaign } from '../../db/repositories/campaigns';
import { listOrders } from '../../db/repositories/commerce-orders';
import { findContact } from '../../db/repositories/contacts';
import { attributionWindowDays } from '../../db/repositories/conversions';
import { attributedTotals, contactTotals, deliveredCount, ordersWithTouches, type RevenueScope } from '../../db/repositories/revenue';

/** ContactCommerce.recentOrders: the spec's last 10, cancelled ones included. */
export const RECENT_ORDERS = 10;
/** GET /commerce/revenue without `from`: the 30 days before `until`. */
export const DEFAULT_PERIOD_DAYS = 30;

/** Whether a touch belongs to the reported scope (for the workspace, every marketing touch does). */
function ownedBy(scope: RevenueScope): (touch: Touch) => boolean {
  if ('campaignId' in scope) return (touch) => touch.campaignId === scope.campaignId;
  if ('automationId' in scope) return (touch) => touch.automationId === scope.automationId;
  return () => true;
}

/**
 * RevenueReport and ContactCommerce. Under the spec's model (last_content_click) the report reads the
 * attribution stored with each order; under the others it reads the same touches again, in the workspace's
 * current window, and lets core/attribution/models.ts share each order out (linear: each touch of the
 * window an equal share of the total and of the refund).
 */
export function createRevenueReports(db: Sequelize) {
  async function report(workspaceId: string, scope: RevenueScope, model: AttributionModel) {
    const windowDays = await attributionWindowDays(db, workspaceId);
    const delivered = await deliveredCount(db, workspaceId, scope);
    let totals;
    if (model === 'last_content_click') {
      totals = await attributedTotals(db, workspaceId, scope);
    } else {
      const owned = ownedBy(scope);
      // Only the share of each order is kept; its touches are dropped with their page.
      const credited: CreditedOrder[] = [];
      for await (const page of ordersWithTouches(db, workspaceId, scope, windowDays)) {
        for (const order of page) {
          credited.push({
            currency: order.currency,
            total: order.total,
            refunded: order.refunded,
            share: creditTouches(model, order.touches, order.placedAt, windowDays)
              .filter((credit) => owned(credit.touch))
              .reduce((sum, credit) => sum + credit.share, 0),
          });
        }
      }
      totals = totalsOf(credited);
    }
    return { ...revenueSummary(totals, delivered), attribution: { model, windowDays } };
  }

  return {
    async campaign(workspaceId: string, campaignId: string, model: AttributionModel) {
      if (!(await findCampaign(db, workspaceId, campaignId))) throw AppError.notFound('Campaign');
      return report(workspaceId, { campaignId }, model);
    },

    async automation(workspaceId: string, automationId: string, model: AttributionModel) {
      if (!(await findAutomation(db, workspaceId, automationId))) throw AppError.notFound('Automation');
      return report(workspaceId, { automationId }, model);
    },

    workspace(workspaceId: string, period: { from?: string; until?: string }, model: AttributionModel, now: Date) {
      const until = period.until ? new Date(period.until) : now;
      const from = period.from ? new Date(period.from) : new Date(until.getTime() - DEFAULT_PERIOD_DAYS * 86_400_000);
      if (from >= until) throw AppError.validation({ formErrors: [], fieldErrors: { from: ['from must be before until'] } });
      return report(workspaceId, { from, until }, model);
    },

    async contact(workspaceId: string, contactId: string) {
      if (!(await findContact(db, workspaceId, contactId))) throw AppError.notFound('Contact');
      const { totals, firstOrderAt, lastOrderAt } = await contactTotals(db, workspaceId, contactId);
      const summary = revenueSummary(totals, null);
      // Test checkouts are no one's purchase; cancelled ones are, so the spec lists them.
      const recentOrders = await listOrders(db, workspaceId, { limit: RECENT_ORDERS, after: null, contactId, includeTest: false });
      return {
        contactId,
        ordersCount: summary.orders,
        totalSpent: summary.revenue,
        currency: summary.currency,
        averageOrderValue: summary.averageOrderValue,
        byCurrency: summary.byCurrency,
        firstOrderAt: firstOrderAt?.toISOString() ?? null,
        lastOrderAt: lastOrderAt?.toISOString() ?? null,
        recentOrders,
      };
    },
  };
}

export type RevenueReports = ReturnType<typeof createRevenueReports>;
