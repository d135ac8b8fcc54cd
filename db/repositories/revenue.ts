import { QueryTypes, type Sequelize } from 'sequelize';
import type { Touch } from '../../core/attribution/models';
import type { MessageKind } from '../../core/dispatch';
import type { CurrencyTotals } from '../../core/commerce/revenue-summary';

/**
 * What the revenue reports read. An order counts when it is neither a test nor cancelled (the spec's rule);
 * amounts are summed per currency by PostgreSQL's numeric (exact) and never across currencies.
 */

/** Whose revenue: a campaign's or an automation's (over their life), or the workspace's orders placed in [from, until). */
export type RevenueScope = { campaignId: string } | { automationId: string } | { from: Date; until: Date };

const COUNTED = `NOT o.test AND o.status <> 'cancelled'`;

/** The scope as a condition on the stored attribution (last_content_click), with its bind values from $2 on. */
function attributedTo(scope: RevenueScope): { where: string; bind: unknown[] } {
  if ('campaignId' in scope) return { where: 'o.attributed_campaign_id = $2', bind: [scope.campaignId] };
  if ('automationId' in scope) return { where: 'o.attributed_automation_id = $2', bind: [scope.automationId] };
  return { where: 'o.attributed_message_id IS NOT NULL AND o.placed_at >= $2 AND o.placed_at < $3', bind: [scope.from.toISOString(), scope.until.toISOString()] };
}

interface TotalsRow { currency: string; orders: string; revenue: string; refunded: string }
const toTotals = (rows: TotalsRow[]): CurrencyTotals[] =>
  rows.map((row) => ({ currency: row.currency, orders: Number(row.orders), revenue: Number(row.revenue), refunded: Number(row.refunded) }));

/** Per-currency sums of the orders attributed (last content click, written with each order) to the scope. */
export async function attributedTotals(db: Sequelize, workspaceId: string, scope: RevenueScope): Promise<CurrencyTotals[]> {
  const { where, bind } = attributedTo(scope);
  const rows = await db.query<TotalsRow>(
    `SELECT o.currency, count(*) AS orders, sum(o.total)::text AS revenue, sum(o.refunded)::text AS refunded
       FROM commerce_orders o WHERE o.workspace_id = $1 AND ${COUNTED} AND ${where} GROUP BY o.currency`,
    { bind: [workspaceId, ...bind], type: QueryTypes.SELECT },
  );
  return toTotals(rows);
}

/**
 * The denominator of revenuePerRecipient: messages delivered (status delivered, or complained, which was
 * delivered first) of the campaign or automation; for the workspace, its marketing messages created in the
 * period (transactional sends never earn an order, so they never dilute the figure).
 */
export async function deliveredCount(db: Sequelize, workspaceId: string, scope: RevenueScope): Promise<number> {
  const [where, bind] =
    'campaignId' in scope ? ['campaign_id = $2', [scope.campaignId]]
    : 'automationId' in scope ? ['automation_id = $2', [scope.automationId]]
    : ["kind IN ('campaign', 'automation') AND created_at >= $2 AND created_at < $3", [scope.from.toISOString(), scope.until.toISOString()]];
  const rows = await db.query<{ delivered: string }>(
    `SELECT count(*) AS delivered FROM messages WHERE workspace_id = $1 AND status IN ('delivered', 'complained') AND ${where}`,
    { bind: [workspaceId, ...bind], type: QueryTypes.SELECT },
  );
  return Number(rows[0].delivered);
}

export interface OrderWithTouches {
  id: string;
  currency: string;
  total: number;
  refunded: number;
  placedAt: Date;
  /** The contact's marketing clicks in the window before placedAt (content or not), for the other models. */
  touches: Touch[];
}

/** Orders per page of a report under another model: bounded memory, few round trips. */
const REPORT_PAGE = 2_000;

interface OrderRow { id: string; currency: string; total: string; refunded: string; placed_at: Date; touches: TouchJson[] }
interface TouchJson { id: string; occurredAt: string; isContent: boolean; kind: MessageKind | null; messageId: string | null; campaignId: string | null; automationId: string | null }

/**
 * The counted orders that the scope could earn under another model than the stored one, each with its
 * contact's marketing touches in the window (core/attribution/models.ts decides the credit). For a campaign
 * or automation: orders of contacts who clicked one of its messages in the window before the order (found
 * from its touches, utm_touches_campaign_idx / _automation_idx); for the workspace: its orders of the period
 * with a contact. Read in pages in (placed_at, id) order, so a report over a busy workspace holds one page
 * of touches at a time, never all of them.
 */
export async function* ordersWithTouches(db: Sequelize, workspaceId: string, scope: RevenueScope, windowDays: number): AsyncGenerator<OrderWithTouches[]> {
  const inWindow = (alias: string) =>
    `${alias}.workspace_id = $1 AND ${alias}.contact_id = o.contact_id AND ${alias}.kind IN ('campaign', 'automation')
     AND ${alias}.occurred_at <= o.placed_at AND ${alias}.occurred_at > o.placed_at - make_interval(days => $2::int)`;
  const entity = 'campaignId' in scope ? ['campaign_id', scope.campaignId] : 'automationId' in scope ? ['automation_id', scope.automationId] : null;
  const where = entity
    ? `o.contact_id IN (SELECT contact_id FROM utm_touches WHERE ${entity[0]} = $3 AND workspace_id = $1)
       AND EXISTS (SELECT 1 FROM utm_touches e WHERE ${inWindow('e')} AND e.${entity[0]} = $3)`
    : 'o.placed_at >= $3 AND o.placed_at < $4';
  const bind = entity ? [entity[1]] : [(scope as { from: Date }).from.toISOString(), (scope as { until: Date }).until.toISOString()];
  const cursorAt = bind.length + 3;
  let cursor: { placedAt: string; id: string } | null = null;
  for (;;) {
    const rows: OrderRow[] = await db.query<OrderRow>(
      `SELECT o.id, o.currency, o.total::text AS total, o.refunded::text AS refunded, o.placed_at,
         coalesce((SELECT json_agg(json_build_object('id', t.id, 'occurredAt', t.occurred_at, 'isContent', t.is_content, 'kind', t.kind,
                    'messageId', t.message_id, 'campaignId', t.campaign_id, 'automationId', t.automation_id))
                   FROM utm_touches t WHERE ${inWindow('t')}), '[]') AS touches
         FROM commerce_orders o
        WHERE o.workspace_id = $1 AND o.contact_id IS NOT NULL AND ${COUNTED} AND ${where}
          AND ($${cursorAt}::timestamptz IS NULL OR (o.placed_at, o.id) > ($${cursorAt}::timestamptz, $${cursorAt + 1}::uuid))
        ORDER BY o.placed_at, o.id LIMIT ${REPORT_PAGE}`,
      { bind: [workspaceId, windowDays, ...bind, cursor?.placedAt ?? null, cursor?.id ?? null], type: QueryTypes.SELECT },
    );
    if (rows.length) {
      yield rows.map((row) => ({
        id: row.id,
        currency: row.currency,
        total: Number(row.total),
        refunded: Number(row.refunded),
        placedAt: new Date(row.placed_at),
        touches: row.touches.map((touch) => ({ ...touch, occurredAt: new Date(touch.occurredAt) })),
      }));
    }
    if (rows.length < REPORT_PAGE) return;
    const last = rows[rows.length - 1];
    cursor = { placedAt: new Date(last.placed_at).toISOString(), id: last.id };
  }
}

/** A contact's counted orders per currency, with the first and last moment one was placed. */
export async function contactTotals(
  db: Sequelize,
  workspaceId: string,
  contactId: string,
): Promise<{ totals: CurrencyTotals[]; firstOrderAt: Date | null; lastOrderAt: Date | null }> {
  const rows = await db.query<TotalsRow & { first_at: Date; last_at: Date }>(
    `SELECT o.currency, count(*) AS orders, sum(o.total)::text AS revenue, sum(o.refunded)::text AS refunded,
            min(o.placed_at) AS first_at, max(o.placed_at) AS last_at
       FROM commerce_orders o WHERE o.workspace_id = $1 AND o.contact_id = $2 AND ${COUNTED} GROUP BY o.currency`,
    { bind: [workspaceId, contactId], type: QueryTypes.SELECT },
  );
  const times = (pick: (row: (typeof rows)[number]) => Date) => rows.map((row) => new Date(pick(row)).getTime());
  return {
    totals: toTotals(rows),
    firstOrderAt: rows.length ? new Date(Math.min(...times((row) => row.first_at))) : null,
    lastOrderAt: rows.length ? new Date(Math.max(...times((row) => row.last_at))) : null,
  };
}
