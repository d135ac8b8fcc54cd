import { QueryTypes, type Sequelize } from 'sequelize';
import type { CurrencyBucket } from '../../core/attribution/currency-totals';

/**
 * Reports over recorded conversions (db/repositories/conversions.ts wrote each one with its touch summary, so
 * nothing here reads touches again, except the first touch's own row for first-touch details). A conversion
 * of a cancelled order or of a store's test order is excluded from every report (decisions.md).
 */

/** Which touch of a conversion gets the credit: the first or the last in its lookback window. */
export type TouchAttribution = 'first' | 'last';

/**
 * The conversions every report counts, with the first touch's row joined (`ft`). `$1` is the workspace.
 * Callers add their own conditions after it with `AND`.
 */
export const COUNTED_CONVERSIONS = `
  FROM conversions c
  LEFT JOIN commerce_orders o ON o.id = c.order_id
  LEFT JOIN utm_touches ft ON ft.id = c.first_touch_id
  WHERE c.workspace_id = $1 AND (o.id IS NULL OR (o.status <> 'cancelled' AND NOT o.test))`;

/** The touch a model credits, as SQL over COUNTED_CONVERSIONS' aliases (only these fixed strings reach SQL). */
export const CREDITED = {
  first: {
    touchId: 'c.first_touch_id', touchAt: 'c.first_touch_at', url: 'c.first_touch_url', nodeId: 'ft.journey_node_id',
    campaignId: 'c.first_campaign_id', automationId: 'c.first_automation_id',
    source: 'ft.source', medium: 'ft.medium', campaign: 'ft.campaign',
  },
  last: {
    touchId: 'c.last_touch_id', touchAt: 'c.last_touch_at', url: 'c.last_touch_url', nodeId: 'c.last_node_id',
    campaignId: 'c.last_campaign_id', automationId: 'c.last_automation_id',
    source: 'c.utm_source', medium: 'c.utm_medium', campaign: 'c.utm_campaign',
  },
} as const satisfies Record<TouchAttribution, Record<string, string>>;

export interface ConversionGroup {
  /** The grouping values, in the order of the keys asked for. */
  keys: Array<string | null>;
  conversions: number;
  contacts: number;
  byCurrency: CurrencyBucket[];
}

/**
 * Groups the conversions `picked` selects (columns k0..kN, contact_id, currency, value_cents) by its keys:
 * count, distinct contacts, and count and value per currency (never added across currencies). Most
 * conversions first.
 */
export async function groupConversions(db: Sequelize, picked: string, keyCount: number, bind: unknown[]): Promise<ConversionGroup[]> {
  const keys = Array.from({ length: keyCount }, (_, index) => `k${index}`);
  const sameKeys = keys.map((key) => `p.${key} IS NOT DISTINCT FROM g.${key}`).join(' AND ') || 'true';
  const rows = await db.query<Record<string, unknown> & { conversions: number; contacts: number; by_currency: Array<{ currency: string | null; conversions: number; revenueCents: string | number }> }>(
    `WITH picked AS (${picked}),
     per_currency AS (
       SELECT ${keys.map((key) => `${key}, `).join('')}currency, count(*)::int AS conversions, sum(value_cents) AS revenue
       FROM picked GROUP BY ${[...keys, 'currency'].join(', ')}
     ),
     groups AS (
       SELECT ${keys.map((key) => `${key}, `).join('')}count(*)::int AS conversions, count(DISTINCT contact_id)::int AS contacts
       FROM picked ${keys.length ? `GROUP BY ${keys.join(', ')}` : 'HAVING count(*) > 0'}
     )
     SELECT g.*, (SELECT jsonb_agg(jsonb_build_object('currency', p.currency, 'conversions', p.conversions, 'revenueCents', p.revenue))
                  FROM per_currency p WHERE ${sameKeys}) AS by_currency
     FROM groups g ORDER BY g.conversions DESC${keys.map((key) => `, g.${key}`).join('')}`,
    { bind, type: QueryTypes.SELECT },
  );
  return rows.map((row) => ({
    keys: keys.map((key) => (row[key] as string | null) ?? null),
    conversions: row.conversions,
    contacts: row.contacts,
    byCurrency: row.by_currency.map((bucket) => ({ currency: bucket.currency, conversions: bucket.conversions, revenueCents: Number(bucket.revenueCents) })),
  }));
}

/** One conversion as the spec's ConversionRow reads it, with the ContactConversion fields beside it. */
export interface ConversionRecord {
  id: string;
  name: string;
  source: string;
  valueCents: number;
  currency: string | null;
  occurredAt: Date;
  contactId: string | null;
  contactEmail: string | null;
  /** The credited touch (by the attribution asked for). */
  touchUrl: string | null;
  touchAt: Date | null;
  nodeId: string | null;
  firstTouchAt: Date | null;
  lastTouchAt: Date | null;
  touchpoints: number;
  lookbackDays: number;
  utmSource: string | null;
  utmMedium: string | null;
  utmCampaign: string | null;
  attributedKind: string | null;
}

interface ConversionRow {
  id: string;
  name: string;
  source: string;
  value_cents: string;
  currency: string | null;
  occurred_at: Date;
  contact_id: string | null;
  contact_email: string | null;
  touch_url: string | null;
  touch_at: Date | null;
  node_id: string | null;
  first_touch_at: Date | null;
  last_touch_at: Date | null;
  touchpoints: number;
  lookback_days: number;
  utm_source: string | null;
  utm_medium: string | null;
  utm_campaign: string | null;
  attributed_kind: string | null;
}

const toRecord = (row: ConversionRow): ConversionRecord => ({
  id: row.id,
  name: row.name,
  source: row.source,
  valueCents: Number(row.value_cents),
  currency: row.currency,
  occurredAt: row.occurred_at,
  contactId: row.contact_id,
  contactEmail: row.contact_email,
  touchUrl: row.touch_url,
  touchAt: row.touch_at,
  nodeId: row.node_id,
  firstTouchAt: row.first_touch_at,
  lastTouchAt: row.last_touch_at,
  touchpoints: row.touchpoints,
  lookbackDays: row.lookback_days,
  utmSource: row.utm_source,
  utmMedium: row.utm_medium,
  utmCampaign: row.utm_campaign,
  attributedKind: row.attributed_kind,
});

/** The columns of ConversionRecord over COUNTED_CONVERSIONS, with the credited touch of `attribution`. */
function recordColumns(attribution: TouchAttribution): string {
  const touch = CREDITED[attribution];
  return `c.id, c.name, c.source, c.value_cents, c.currency, c.occurred_at, c.contact_id,
    (SELECT i.address FROM contact_identities i
      WHERE i.workspace_id = c.workspace_id AND i.contact_id = c.contact_id AND i.channel = 'email'
      ORDER BY i.is_primary DESC, i.created_at LIMIT 1) AS contact_email,
    ${touch.url} AS touch_url, ${touch.touchAt} AS touch_at, ${touch.nodeId} AS node_id,
    c.first_touch_at, c.last_touch_at, c.touchpoints, c.lookback_days,
    ${touch.source} AS utm_source, ${touch.medium} AS utm_medium, ${touch.campaign} AS utm_campaign, c.attributed_kind`;
}

/**
 * A contact's conversions, newest first, a page of them, with the credited touch of the last-touch summary,
 * and their count and value per currency over all of them.
 */
export async function contactConversions(
  db: Sequelize,
  workspaceId: string,
  contactId: string,
  page: { limit: number; offset: number },
): Promise<{ rows: ConversionRecord[]; totals: ConversionGroup | null }> {
  const rows = await db.query<ConversionRow>(
    `SELECT ${recordColumns('last')} ${COUNTED_CONVERSIONS} AND c.contact_id = $2
     ORDER BY c.occurred_at DESC, c.id DESC LIMIT $3 OFFSET $4`,
    { bind: [workspaceId, contactId, page.limit, page.offset], type: QueryTypes.SELECT },
  );
  const [totals] = await groupConversions(db, `SELECT c.contact_id, c.currency, c.value_cents ${COUNTED_CONVERSIONS} AND c.contact_id = $2`, 0, [workspaceId, contactId]);
  return { rows: rows.map(toRecord), totals: totals ?? null };
}

export type ConvertingEntity = { campaignId: string } | { automationId: string };

export interface EntityConversionReport {
  totals: ConversionGroup | null;
  byName: ConversionGroup[];
  byLink: ConversionGroup[];
  recent: ConversionRecord[];
}

/**
 * The conversions a campaign or an automation earned: those whose credited touch (first or last in the
 * lookback window) is a click on one of its messages. Totals, by conversion name, by the canonical URL of the
 * credited touch, and the latest 50.
 */
export async function entityConversions(
  db: Sequelize,
  workspaceId: string,
  entity: ConvertingEntity,
  attribution: TouchAttribution,
): Promise<EntityConversionReport> {
  const touch = CREDITED[attribution];
  const owner = 'campaignId' in entity ? `${touch.campaignId} = $2` : `${touch.automationId} = $2`;
  const bind = [workspaceId, 'campaignId' in entity ? entity.campaignId : entity.automationId];
  const picked = (keys: string[]) =>
    `SELECT ${keys.map((key, index) => `${key} AS k${index}, `).join('')}c.contact_id, c.currency, c.value_cents ${COUNTED_CONVERSIONS} AND ${owner}`;
  const [[totals], byName, byLink, recent] = await Promise.all([
    groupConversions(db, picked([]), 0, bind),
    groupConversions(db, picked(['c.name']), 1, bind),
    groupConversions(db, picked([touch.url]), 1, bind),
    db.query<ConversionRow>(`SELECT ${recordColumns(attribution)} ${COUNTED_CONVERSIONS} AND ${owner} ORDER BY c.occurred_at DESC, c.id DESC LIMIT 50`, {
      bind,
      type: QueryTypes.SELECT,
    }),
  ]);
  return { totals: totals ?? null, byName, byLink, recent: recent.map(toRecord) };
}
