import { randomUUID } from 'node:crypto';
import { QueryTypes, type Sequelize, type Transaction } from 'sequelize';

export type ConversionSource = 'event' | 'order' | 'analytics';

export interface NewConversion {
  /** Null for a conversion nobody can be tied to (it is counted, never attributed). */
  contactId: string | null;
  name: string;
  source: ConversionSource;
  /** What makes it the same conversion again: the event's id, the order's id, the analytics row's id. */
  externalId: string;
  valueCents: number;
  currency: string | null;
  occurredAt: Date;
  orderId?: string | null;
  /** The workspace's attribution window: touches this many days before `occurredAt` count. */
  lookbackDays: number;
  /**
   * UTM parameters the conversion carries itself (an analytics product's visit), kept only when the contact
   * has no touch of ours in the window: a touch of ours always decides the conversion's UTM.
   */
  utm?: { source: string | null; medium: string | null; campaign: string | null };
}

/**
 * Records a conversion with its touch summary, in one statement: the contact's touches in the lookback
 * window before the conversion (every human click of ours, content or not, any kind), their count, the first
 * and the last with what they credit (campaign, automation, message, node, UTM, URL). Reports read conversions
 * only, never touches again. The same (source, external id) again updates the one row (an order whose total
 * changed, a re-sent event), recomputing its summary, so a retry never counts twice. Returns the row's id and
 * whether this call created it. A conversion's own `utm` fills the UTM columns only when no touch of ours
 * is in its window (without one, as for events and orders, the columns stay null then).
 */
export async function recordConversion(
  db: Sequelize,
  workspaceId: string,
  conversion: NewConversion,
  transaction?: Transaction,
): Promise<{ id: string; created: boolean }> {
  const rows = await db.query<{ id: string; created: boolean }>(
    `WITH touches AS (
       SELECT * FROM utm_touches
        WHERE workspace_id = $1 AND contact_id = $2
          AND occurred_at <= $7 AND occurred_at > $7 - make_interval(days => $9::int)
     ),
     first_touch AS (SELECT * FROM touches ORDER BY occurred_at, id LIMIT 1),
     last_touch AS (SELECT * FROM touches ORDER BY occurred_at DESC, id DESC LIMIT 1)
     INSERT INTO conversions AS c (
       id, workspace_id, contact_id, name, source, external_id, value_cents, currency, occurred_at, order_id, lookback_days,
       touchpoints, first_touch_id, first_touch_at, first_campaign_id, first_automation_id, first_touch_url,
       last_touch_id, last_touch_at, last_campaign_id, last_automation_id, last_message_id, last_node_id, last_touch_url,
       utm_source, utm_medium, utm_campaign, attributed_kind)
     SELECT $10, $1, $2, $3, $4, $5, $6, $8, $7, $11, $9,
       (SELECT count(*) FROM touches),
       f.id, f.occurred_at, f.campaign_id, f.automation_id, coalesce(f.canonical_url, f.url),
       l.id, l.occurred_at, l.campaign_id, l.automation_id, l.message_id, l.journey_node_id, coalesce(l.canonical_url, l.url),
       CASE WHEN l.id IS NULL THEN $12::text ELSE l.source END,
       CASE WHEN l.id IS NULL THEN $13::text ELSE l.medium END,
       CASE WHEN l.id IS NULL THEN $14::text ELSE l.campaign END,
       CASE WHEN l.id IS NOT NULL THEN l.kind WHEN $4 IN ('event', 'analytics') THEN $4 END
     FROM (SELECT 1) one LEFT JOIN first_touch f ON true LEFT JOIN last_touch l ON true
     ON CONFLICT (workspace_id, source, external_id) DO UPDATE SET
       contact_id = EXCLUDED.contact_id, name = EXCLUDED.name, value_cents = EXCLUDED.value_cents, currency = EXCLUDED.currency,
       occurred_at = EXCLUDED.occurred_at, order_id = EXCLUDED.order_id, lookback_days = EXCLUDED.lookback_days,
       touchpoints = EXCLUDED.touchpoints, first_touch_id = EXCLUDED.first_touch_id, first_touch_at = EXCLUDED.first_touch_at,
       first_campaign_id = EXCLUDED.first_campaign_id, first_automation_id = EXCLUDED.first_automation_id,
       first_touch_url = EXCLUDED.first_touch_url, last_touch_id = EXCLUDED.last_touch_id, last_touch_at = EXCLUDED.last_touch_at,
       last_campaign_id = EXCLUDED.last_campaign_id, last_automation_id = EXCLUDED.last_automation_id,
       last_message_id = EXCLUDED.last_message_id, last_node_id = EXCLUDED.last_node_id, last_touch_url = EXCLUDED.last_touch_url,
       utm_source = EXCLUDED.utm_source, utm_medium = EXCLUDED.utm_medium, utm_campaign = EXCLUDED.utm_campaign,
       attributed_kind = EXCLUDED.attributed_kind
     RETURNING id, (xmax = 0) AS created`,
    {
      bind: [
        workspaceId, conversion.contactId, conversion.name, conversion.source, conversion.externalId, conversion.valueCents,
        conversion.occurredAt, conversion.currency, conversion.lookbackDays, randomUUID(), conversion.orderId ?? null,
        conversion.utm?.source ?? null, conversion.utm?.medium ?? null, conversion.utm?.campaign ?? null,
      ],
      type: QueryTypes.SELECT,
      transaction,
    },
  );
  return rows[0];
}

/** The workspace's attribution window in days (5 unless set with PUT /commerce/settings). */
export async function attributionWindowDays(db: Sequelize, workspaceId: string, transaction?: Transaction): Promise<number> {
  const rows = await db.query<{ days: number }>(
    'SELECT attribution_window_days AS days FROM commerce_settings WHERE workspace_id = $1',
    { bind: [workspaceId], type: QueryTypes.SELECT, transaction },
  );
  return rows[0]?.days ?? DEFAULT_ATTRIBUTION_WINDOW_DAYS;
}

export const DEFAULT_ATTRIBUTION_WINDOW_DAYS = 5;
