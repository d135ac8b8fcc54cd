import { randomUUID } from 'node:crypto';
import { QueryTypes, type Sequelize, type Transaction } from 'sequelize';

export type OrderSource = 'store' | 'api';
export type OrderStatus = 'placed' | 'fulfilled' | 'cancelled';

export interface OrderItem {
  title: string;
  quantity: number;
  price: number | null;
  productId: string | null;
}

export interface NewOrder {
  source: OrderSource;
  /** The store connection an order of source `store` came through; null for the API. */
  connectionId: string | null;
  externalId: string;
  contactId: string | null;
  status: OrderStatus;
  /** Major-unit amounts as numeric text (core/commerce/money.ts amountText), so no float reaches the column. */
  total: string;
  refunded: string;
  currency: string;
  placedAt: Date;
  items: OrderItem[];
  test: boolean;
}

/** An order as stored: what was written, its id, and the attribution computed with it. */
export interface OrderRecord extends NewOrder {
  id: string;
  attributedMessageId: string | null;
  attributedCampaignId: string | null;
  attributedAutomationId: string | null;
  attributedTouchId: string | null;
}

interface OrderRow {
  id: string; source: OrderSource; connection_id: string | null; external_id: string; contact_id: string | null; status: OrderStatus;
  total: string; refunded: string; currency: string; placed_at: Date; items: OrderItem[]; test: boolean;
  attributed_message_id: string | null; attributed_campaign_id: string | null; attributed_automation_id: string | null; attributed_touch_id: string | null;
}

const ORDER_COLUMNS = `id, source, connection_id, external_id, contact_id, status, total::text AS total, refunded::text AS refunded, currency,
  placed_at, items, test, attributed_message_id, attributed_campaign_id, attributed_automation_id, attributed_touch_id`;

const toOrder = (row: OrderRow): OrderRecord => ({
  id: row.id,
  source: row.source,
  connectionId: row.connection_id,
  externalId: row.external_id,
  contactId: row.contact_id,
  status: row.status,
  total: row.total,
  refunded: row.refunded,
  currency: row.currency,
  placedAt: new Date(row.placed_at),
  items: row.items,
  test: row.test,
  attributedMessageId: row.attributed_message_id,
  attributedCampaignId: row.attributed_campaign_id,
  attributedAutomationId: row.attributed_automation_id,
  attributedTouchId: row.attributed_touch_id,
});

/**
 * Writes an order with its attribution in one statement: the contact's last content click of a marketing
 * message within `windowDays` before placedAt (core/attribution/models.ts, last_content_click), found by one
 * probe of `utm_touches_attribution_idx` (its predicate is exactly the rule: content, campaign or
 * automation, a contact). Touches hold human clicks only, so bots and opens never earn an order. The same
 * (source, connection, external id) again updates the one order and recomputes its attribution, so a store
 * re-sending an order, or one whose placedAt changed, never counts twice.
 */
export async function upsertOrder(
  db: Sequelize,
  workspaceId: string,
  order: NewOrder,
  windowDays: number,
  transaction?: Transaction,
): Promise<{ order: OrderRecord; created: boolean }> {
  const rows = await db.query<OrderRow & { created: boolean }>(
    `WITH touch AS (
       SELECT id, message_id, campaign_id, automation_id FROM utm_touches
        WHERE workspace_id = $1 AND contact_id = $5 AND is_content AND kind IN ('campaign', 'automation')
          AND occurred_at <= $10 AND occurred_at > $10 - make_interval(days => $13::int)
        ORDER BY occurred_at DESC, id DESC LIMIT 1
     )
     INSERT INTO commerce_orders AS o (id, workspace_id, source, connection_id, external_id, contact_id, status, total, refunded, currency,
       placed_at, items, test, attributed_message_id, attributed_campaign_id, attributed_automation_id, attributed_touch_id)
     SELECT $14, $1, $2, $3, $4, $5, $6, $7::numeric, $8::numeric, $9, $10, $11::jsonb, $12,
       t.message_id, t.campaign_id, t.automation_id, t.id
     FROM (SELECT 1) one LEFT JOIN touch t ON true
     ON CONFLICT (workspace_id, source, coalesce(connection_id, '00000000-0000-0000-0000-000000000000'::uuid), external_id) DO UPDATE SET
       contact_id = EXCLUDED.contact_id, status = EXCLUDED.status, total = EXCLUDED.total, refunded = EXCLUDED.refunded,
       currency = EXCLUDED.currency, placed_at = EXCLUDED.placed_at, items = EXCLUDED.items, test = EXCLUDED.test,
       attributed_message_id = EXCLUDED.attributed_message_id, attributed_campaign_id = EXCLUDED.attributed_campaign_id,
       attributed_automation_id = EXCLUDED.attributed_automation_id, attributed_touch_id = EXCLUDED.attributed_touch_id,
       updated_at = now()
     RETURNING ${ORDER_COLUMNS}, (xmax = 0) AS created`,
    {
      bind: [
        workspaceId, order.source, order.connectionId, order.externalId, order.contactId, order.status, order.total, order.refunded,
        order.currency, order.placedAt.toISOString(), JSON.stringify(order.items), order.test, windowDays, randomUUID(),
      ],
      type: QueryTypes.SELECT,
      transaction,
    },
  );
  return { order: toOrder(rows[0]), created: rows[0].created };
}

export async function findOrder(db: Sequelize, workspaceId: string, orderId: string): Promise<OrderRecord | null> {
  const rows = await db.query<OrderRow>(`SELECT ${ORDER_COLUMNS} FROM commerce_orders WHERE workspace_id = $1 AND id = $2`, {
    bind: [workspaceId, orderId],
    type: QueryTypes.SELECT,
  });
  return rows[0] ? toOrder(rows[0]) : null;
}

/** Where a page ends: the last order's placedAt and id (ties on placedAt are broken by id). */
export interface OrderCursor {
  placedAt: Date;
  id: string;
}

/** A page of the workspace's orders, newest first, keyset-paged on commerce_orders_newest_idx. */
export async function listOrders(
  db: Sequelize,
  workspaceId: string,
  page: { limit: number; after: OrderCursor | null; contactId?: string; includeTest?: boolean },
): Promise<OrderRecord[]> {
  const rows = await db.query<OrderRow>(
    `SELECT ${ORDER_COLUMNS} FROM commerce_orders
      WHERE workspace_id = $1
        AND ($2::timestamptz IS NULL OR (placed_at, id) < ($2::timestamptz, $3::uuid))
        AND ($5::uuid IS NULL OR contact_id = $5)
        AND ($6 OR NOT test)
      ORDER BY placed_at DESC, id DESC LIMIT $4`,
    {
      bind: [workspaceId, page.after?.placedAt.toISOString() ?? null, page.after?.id ?? null, page.limit, page.contactId ?? null, page.includeTest ?? true],
      type: QueryTypes.SELECT,
    },
  );
  return rows.map(toOrder);
}
