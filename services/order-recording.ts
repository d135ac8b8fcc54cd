import type { Sequelize } from 'sequelize';
import { toCents } from '../core/commerce/money';
import { type NewOrder, type OrderRecord, upsertOrder } from '../db/repositories/commerce-orders';
import { attributionWindowDays, recordConversion } from '../db/repositories/conversions';

/**
 * Records an order, whoever sends it (POST /commerce/orders with source `api`, a store connector with source
 * `store` and its connection: docs/commerce.md): in one transaction, the order with its attribution under the
 * workspace's window (one statement, db/repositories/commerce-orders.ts), then its conversion (source
 * `order`, external id the order's id, integer cents), so no report ever sees one without the other. A
 * repeat of the order updates both.
 */
export async function recordOrder(db: Sequelize, workspaceId: string, order: NewOrder): Promise<{ order: OrderRecord; created: boolean }> {
  return db.transaction(async (transaction) => {
    const windowDays = await attributionWindowDays(db, workspaceId, transaction);
    const written = await upsertOrder(db, workspaceId, order, windowDays, transaction);
    await recordConversion(
      db,
      workspaceId,
      {
        contactId: written.order.contactId,
        name: 'order',
        source: 'order',
        externalId: written.order.id,
        valueCents: toCents(written.order.total),
        currency: written.order.currency,
        occurredAt: written.order.placedAt,
        orderId: written.order.id,
        lookbackDays: windowDays,
      },
      transaction,
    );
    return written;
  });
}
