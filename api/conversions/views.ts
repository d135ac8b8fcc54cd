import { totalAcrossCurrencies } from '../../core/attribution/currency-totals';
import type { ConversionGroup, ConversionRecord } from '../../db/repositories/conversion-reports';
import type { ConversionNameStats, UtmConversionRecord, UtmTouchRecord } from '../../db/repositories/utm-reports';

const iso = (at: Date | null) => (at ? at.toISOString() : null);
const secondsBetween = (from: Date | null, to: Date) => (from ? Math.floor((to.getTime() - from.getTime()) / 1000) : null);

export const touchView = (touch: UtmTouchRecord) => ({ ...touch, occurredAt: touch.occurredAt.toISOString() });

/** revenueCents, currency and byCurrency of a group; a missing group (no conversions) is zero. */
export const moneyView = (group: ConversionGroup | null) => totalAcrossCurrencies(group?.byCurrency ?? []);

export const summaryRowView = (group: ConversionGroup) => ({
  source: group.keys[0],
  medium: group.keys[1],
  campaign: group.keys[2],
  conversions: group.conversions,
  contacts: group.contacts,
  ...moneyView(group),
});

export const conversionStatsView = (stats: ConversionNameStats) => ({
  name: stats.keys[0] ?? '',
  conversions: stats.conversions,
  contacts: stats.contacts,
  ...moneyView(stats),
  avgTimeToConvertSeconds: stats.avgTimeToConvertSeconds,
  avgTouchpoints: stats.avgTouchpoints,
  firstAt: stats.firstAt.toISOString(),
  lastAt: stats.lastAt.toISOString(),
});

export const utmConversionView = (conversion: UtmConversionRecord) => ({ ...conversion, occurredAt: conversion.occurredAt.toISOString() });

/** The spec's ConversionRow: the credited touch, and the seconds from it to the conversion. */
export const conversionRowView = (row: ConversionRecord) => ({
  id: row.id,
  name: row.name,
  source: row.source,
  valueCents: row.valueCents,
  currency: row.currency,
  occurredAt: row.occurredAt.toISOString(),
  contactId: row.contactId,
  contactEmail: row.contactEmail,
  touchUrl: row.touchUrl,
  touchAt: iso(row.touchAt),
  nodeId: row.nodeId,
  secondsFromTouch: secondsBetween(row.touchAt, row.occurredAt),
});

/** ConversionRow and the spec's ContactConversion in one row: both are listed for a contact's conversions. */
export const contactConversionView = (row: ConversionRecord) => ({
  ...conversionRowView(row),
  firstTouchAt: iso(row.firstTouchAt),
  lastTouchAt: iso(row.lastTouchAt),
  timeToConvertSeconds: secondsBetween(row.firstTouchAt, row.occurredAt),
  touchpoints: row.touchpoints,
  utmSource: row.utmSource,
  utmMedium: row.utmMedium,
  utmCampaign: row.utmCampaign,
  attributedKind: row.attributedKind,
});
