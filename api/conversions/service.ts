import type { Response } from 'express';
import type { Sequelize } from 'sequelize';
import { csvRecord } from '../../core/csv';
import { AppError } from '../../core/errors';
import { findAutomation } from '../../db/repositories/automations';
import { findCampaign } from '../../db/repositories/campaigns';
import { findContact } from '../../db/repositories/contacts';
import { type ConvertingEntity, contactConversions, entityConversions, type TouchAttribution } from '../../db/repositories/conversion-reports';
import { attributionWindowDays } from '../../db/repositories/conversions';
import { type ConversionPeriod, conversionStats, listTouches, type TouchFilters, touchesAfter, utmConversions, utmSummary } from '../../db/repositories/utm-reports';
import { drained } from '../http/drained';
import { contactConversionView, conversionRowView, conversionStatsView, moneyView, summaryRowView, touchView, utmConversionView } from './views';

/** Touches per CSV batch: one indexed range read each, small enough to keep the export's memory flat. */
const CSV_BATCH = 1_000;
export const TOUCH_CSV_COLUMNS = ['id', 'occurredAt', 'contactId', 'messageId', 'source', 'medium', 'campaign', 'url', 'isContent'] as const;

const periodOf = (query: { from?: string; until?: string }): ConversionPeriod => ({
  from: query.from ? new Date(query.from) : undefined,
  until: query.until ? new Date(query.until) : undefined,
});

/** UTM touches, conversions and what they earned, read from what tracking and recordConversion stored. */
export function createConversionService(db: Sequelize) {
  return {
    async touches(workspaceId: string, filters: TouchFilters, page: { page: number; pageSize: number }) {
      const { rows, total } = await listTouches(db, workspaceId, filters, { limit: page.pageSize, offset: (page.page - 1) * page.pageSize });
      return { data: rows.map(touchView), total, page: page.page, pageSize: page.pageSize };
    },

    /** Streams every matching touch as CSV, batch by batch, waiting for the client to drain before reading on. */
    async touchCsv(workspaceId: string, filters: TouchFilters, res: Response): Promise<void> {
      res.setHeader('content-type', 'text/csv; charset=utf-8');
      res.setHeader('content-disposition', 'attachment; filename="utm-touches.csv"');
      res.write(csvRecord(TOUCH_CSV_COLUMNS));
      let after: { occurredAt: Date; id: string } | null = null;
      for (;;) {
        const batch = await touchesAfter(db, workspaceId, filters, after, CSV_BATCH);
        const text = batch
          .map((touch) => csvRecord([touch.id, touch.occurredAt.toISOString(), touch.contactId, touch.messageId, touch.source, touch.medium, touch.campaign, touch.url, String(touch.isContent)]))
          .join('');
        if (text && !res.write(text)) await drained(res);
        if (batch.length < CSV_BATCH) break;
        const last = batch[batch.length - 1];
        after = { occurredAt: last.occurredAt, id: last.id };
      }
      res.end();
    },

    async summary(workspaceId: string, attribution: TouchAttribution, query: { from?: string; until?: string }) {
      const { groups, unattributed } = await utmSummary(db, workspaceId, attribution, periodOf(query));
      return { attribution, rows: groups.map(summaryRowView), unattributed };
    },

    async conversions(workspaceId: string, attribution: TouchAttribution, query: { from?: string; until?: string; limit: number; offset: number }) {
      const { rows, total } = await utmConversions(db, workspaceId, attribution, periodOf(query), { limit: query.limit, offset: query.offset });
      return { data: rows.map(utmConversionView), total };
    },

    /** UtmConversionStats: counted conversions by name, filtered by period and by the credited touch's UTM. */
    async stats(workspaceId: string, attribution: TouchAttribution, query: { from?: string; until?: string; source?: string; medium?: string; campaign?: string }) {
      const rows = await conversionStats(db, workspaceId, attribution, { ...periodOf(query), source: query.source, medium: query.medium, campaign: query.campaign });
      return { data: rows.map(conversionStatsView) };
    },

    async ofContact(workspaceId: string, contactId: string, page: { limit: number; offset: number }) {
      if (!(await findContact(db, workspaceId, contactId))) throw AppError.notFound('Contact');
      const [{ rows, totals }, lookbackDays] = await Promise.all([contactConversions(db, workspaceId, contactId, page), attributionWindowDays(db, workspaceId)]);
      const { revenueCents, currency, byCurrency } = moneyView(totals);
      return { data: rows.map(contactConversionView), totals: { conversions: totals?.conversions ?? 0, revenueCents, currency, byCurrency }, lookbackDays };
    },

    async ofEntity(workspaceId: string, entity: ConvertingEntity, attribution: TouchAttribution) {
      const exists = 'campaignId' in entity ? await findCampaign(db, workspaceId, entity.campaignId) : await findAutomation(db, workspaceId, entity.automationId);
      if (!exists) throw AppError.notFound('campaignId' in entity ? 'Campaign' : 'Automation');
      const [report, lookbackDays] = await Promise.all([entityConversions(db, workspaceId, entity, attribution), attributionWindowDays(db, workspaceId)]);
      return {
        attribution,
        lookbackDays,
        total: report.totals?.conversions ?? 0,
        contacts: report.totals?.contacts ?? 0,
        ...moneyView(report.totals),
        byName: report.byName.map((group) => ({ name: group.keys[0] ?? '', conversions: group.conversions, ...moneyView(group) })),
        byLink: report.byLink.map((group) => ({ url: group.keys[0] ?? '', conversions: group.conversions, contacts: group.contacts, ...moneyView(group) })),
        recent: report.recent.map(conversionRowView),
      };
    },
  };
}

export type ConversionService = ReturnType<typeof createConversionService>;
