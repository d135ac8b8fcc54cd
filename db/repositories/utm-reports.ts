import { QueryTypes, type Sequelize } from 'sequelize';
import { COUNTED_CONVERSIONS, CREDITED, type ConversionGroup, groupConversions, type TouchAttribution } from './conversion-reports';

/** GET /utm/touches' filters: exact UTM values, a contact, and a period (from inclusive, until exclusive). */
export interface TouchFilters {
  source?: string;
  medium?: string;
  campaign?: string;
  contactId?: string;
  from?: Date;
  until?: Date;
}

export interface UtmTouchRecord {
  id: string;
  source: string | null;
  medium: string | null;
  campaign: string | null;
  contactId: string | null;
  messageId: string | null;
  url: string;
  isContent: boolean;
  occurredAt: Date;
}

interface TouchRow {
  id: string;
  source: string | null;
  medium: string | null;
  campaign: string | null;
  contact_id: string | null;
  message_id: string | null;
  url: string;
  is_content: boolean;
  occurred_at: Date;
}

const toTouch = (row: TouchRow): UtmTouchRecord => ({
  id: row.id,
  source: row.source,
  medium: row.medium,
  campaign: row.campaign,
  contactId: row.contact_id,
  messageId: row.message_id,
  url: row.url,
  isContent: row.is_content,
  occurredAt: row.occurred_at,
});

// $1 workspace, $2..$7 the filters; a null filter matches everything.
const TOUCH_FILTERS = `workspace_id = $1
  AND ($2::text IS NULL OR source = $2) AND ($3::text IS NULL OR medium = $3) AND ($4::text IS NULL OR campaign = $4)
  AND ($5::uuid IS NULL OR contact_id = $5) AND ($6::timestamptz IS NULL OR occurred_at >= $6) AND ($7::timestamptz IS NULL OR occurred_at < $7)`;
const TOUCH_COLUMNS = 'id, source, medium, campaign, contact_id, message_id, coalesce(canonical_url, url) AS url, is_content, occurred_at';

const filterBind = (workspaceId: string, filters: TouchFilters) => [
  workspaceId, filters.source ?? null, filters.medium ?? null, filters.campaign ?? null, filters.contactId ?? null, filters.from ?? null, filters.until ?? null,
];

/** A page of a workspace's touches, newest first, and how many match in all. */
export async function listTouches(
  db: Sequelize,
  workspaceId: string,
  filters: TouchFilters,
  page: { limit: number; offset: number },
): Promise<{ rows: UtmTouchRecord[]; total: number }> {
  const bind = filterBind(workspaceId, filters);
  const [rows, counted] = await Promise.all([
    db.query<TouchRow>(`SELECT ${TOUCH_COLUMNS} FROM utm_touches WHERE ${TOUCH_FILTERS} ORDER BY occurred_at DESC, id DESC LIMIT $8 OFFSET $9`, {
      bind: [...bind, page.limit, page.offset],
      type: QueryTypes.SELECT,
    }),
    db.query<{ total: number }>(`SELECT count(*)::int AS total FROM utm_touches WHERE ${TOUCH_FILTERS}`, { bind, type: QueryTypes.SELECT }),
  ]);
  return { rows: rows.map(toTouch), total: counted[0].total };
}

/**
 * The next batch of matching touches after a position (newest first), for the CSV export: it pages by the
 * (occurred_at, id) key, so each batch is one index range and the export never holds the whole set. A touch
 * written during the export is listed or not depending on where it falls, but no row is ever listed twice.
 */
export async function touchesAfter(
  db: Sequelize,
  workspaceId: string,
  filters: TouchFilters,
  after: { occurredAt: Date; id: string } | null,
  limit: number,
): Promise<UtmTouchRecord[]> {
  const rows = await db.query<TouchRow>(
    `SELECT ${TOUCH_COLUMNS} FROM utm_touches WHERE ${TOUCH_FILTERS}
       -- occurred_at <= $8 repeats the key's first column alone, so it bounds the index range (the row comparison cannot).
       AND ($8::timestamptz IS NULL OR (occurred_at <= $8 AND (occurred_at, id) < ($8, $9::uuid)))
     ORDER BY occurred_at DESC, id DESC LIMIT $10`,
    { bind: [...filterBind(workspaceId, filters), after?.occurredAt ?? null, after?.id ?? null, limit], type: QueryTypes.SELECT },
  );
  return rows.map(toTouch);
}

export interface ConversionPeriod {
  from?: Date;
  until?: Date;
}

// $2 from, $3 until over the conversion's own time.
const IN_PERIOD = '($2::timestamptz IS NULL OR c.occurred_at >= $2) AND ($3::timestamptz IS NULL OR c.occurred_at < $3)';

/**
 * Conversions grouped by the UTM source, medium and campaign of their credited touch (first or last in the
 * lookback window), and how many had no touch at all (unattributed).
 */
export async function utmSummary(
  db: Sequelize,
  workspaceId: string,
  attribution: TouchAttribution,
  period: ConversionPeriod,
): Promise<{ groups: ConversionGroup[]; unattributed: number }> {
  const touch = CREDITED[attribution];
  const bind = [workspaceId, period.from ?? null, period.until ?? null];
  const [groups, unattributed] = await Promise.all([
    groupConversions(
      db,
      `SELECT ${touch.source} AS k0, ${touch.medium} AS k1, ${touch.campaign} AS k2, c.contact_id, c.currency, c.value_cents
       ${COUNTED_CONVERSIONS} AND ${IN_PERIOD} AND ${touch.touchId} IS NOT NULL`,
      3,
      bind,
    ),
    db.query<{ count: number }>(`SELECT count(*)::int AS count ${COUNTED_CONVERSIONS} AND ${IN_PERIOD} AND ${touch.touchId} IS NULL`, {
      bind,
      type: QueryTypes.SELECT,
    }),
  ]);
  return { groups, unattributed: unattributed[0].count };
}

export interface UtmConversionRecord {
  id: string;
  name: string;
  conversionSource: string;
  source: string | null;
  medium: string | null;
  campaign: string | null;
  valueCents: number;
  currency: string | null;
  contactId: string | null;
  occurredAt: Date;
}

/** A page of conversions, newest first, with the UTM values of their credited touch, and how many in all. */
export async function utmConversions(
  db: Sequelize,
  workspaceId: string,
  attribution: TouchAttribution,
  period: ConversionPeriod,
  page: { limit: number; offset: number },
): Promise<{ rows: UtmConversionRecord[]; total: number }> {
  const touch = CREDITED[attribution];
  const bind = [workspaceId, period.from ?? null, period.until ?? null];
  type Row = { id: string; name: string; source: string; utm_source: string | null; utm_medium: string | null; utm_campaign: string | null; value_cents: string; currency: string | null; contact_id: string | null; occurred_at: Date };
  const [rows, counted] = await Promise.all([
    db.query<Row>(
      `SELECT c.id, c.name, c.source, ${touch.source} AS utm_source, ${touch.medium} AS utm_medium, ${touch.campaign} AS utm_campaign,
              c.value_cents, c.currency, c.contact_id, c.occurred_at
       ${COUNTED_CONVERSIONS} AND ${IN_PERIOD} ORDER BY c.occurred_at DESC, c.id DESC LIMIT $4 OFFSET $5`,
      { bind: [...bind, page.limit, page.offset], type: QueryTypes.SELECT },
    ),
    db.query<{ total: number }>(`SELECT count(*)::int AS total ${COUNTED_CONVERSIONS} AND ${IN_PERIOD}`, { bind, type: QueryTypes.SELECT }),
  ]);
  return {
    rows: rows.map((row) => ({
      id: row.id,
      name: row.name,
      conversionSource: row.source,
      source: row.utm_source,
      medium: row.utm_medium,
      campaign: row.utm_campaign,
      valueCents: Number(row.value_cents),
      currency: row.currency,
      contactId: row.contact_id,
      occurredAt: row.occurred_at,
    })),
    total: counted[0].total,
  };
}

/** GET /utm/conversions/stats' filters: the period, and exact UTM values of the credited touch. */
export interface ConversionStatsFilters extends ConversionPeriod {
  source?: string;
  medium?: string;
  campaign?: string;
}

/** One conversion name's figures (the spec's UtmConversionStats row), with its money per currency. */
export interface ConversionNameStats extends ConversionGroup {
  avgTimeToConvertSeconds: number | null;
  avgTouchpoints: number | null;
  firstAt: Date;
  lastAt: Date;
}

/**
 * Counted conversions by name: how many, from how many contacts, value per currency, the average time from
 * the first touch in the window to the conversion (over those that had a touch), the average touchpoints
 * (over those tied to a contact: one nobody can be tied to has no touches to count) and the first and last
 * moment. `attribution` decides which touch's UTM the filters match. Most conversions first.
 */
export async function conversionStats(
  db: Sequelize,
  workspaceId: string,
  attribution: TouchAttribution,
  filters: ConversionStatsFilters,
): Promise<ConversionNameStats[]> {
  const touch = CREDITED[attribution];
  const where = `${COUNTED_CONVERSIONS} AND ${IN_PERIOD}
    AND ($4::text IS NULL OR ${touch.source} = $4) AND ($5::text IS NULL OR ${touch.medium} = $5) AND ($6::text IS NULL OR ${touch.campaign} = $6)`;
  const bind = [workspaceId, filters.from ?? null, filters.until ?? null, filters.source ?? null, filters.medium ?? null, filters.campaign ?? null];
  type Row = { name: string; avg_ttc: string | null; avg_touchpoints: string | null; first_at: Date; last_at: Date };
  const [groups, rows] = await Promise.all([
    groupConversions(db, `SELECT c.name AS k0, c.contact_id, c.currency, c.value_cents ${where}`, 1, bind),
    db.query<Row>(
      `SELECT c.name,
              avg(extract(epoch FROM c.occurred_at - c.first_touch_at)) FILTER (WHERE c.first_touch_at IS NOT NULL) AS avg_ttc,
              avg(c.touchpoints) FILTER (WHERE c.contact_id IS NOT NULL) AS avg_touchpoints,
              min(c.occurred_at) AS first_at, max(c.occurred_at) AS last_at
       ${where} GROUP BY c.name`,
      { bind, type: QueryTypes.SELECT },
    ),
  ]);
  const byName = new Map(rows.map((row) => [row.name, row]));
  return groups.flatMap((group) => {
    const row = byName.get(group.keys[0] ?? '');
    if (!row) return [];
    return [{
      ...group,
      avgTimeToConvertSeconds: row.avg_ttc === null ? null : Math.round(Number(row.avg_ttc)),
      avgTouchpoints: row.avg_touchpoints === null ? null : Math.round(Number(row.avg_touchpoints) * 100) / 100,
      firstAt: row.first_at,
      lastAt: row.last_at,
    }];
  });
}
