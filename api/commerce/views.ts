import { amountFromText, displayAmount } from '../../core/commerce/money';
import type { OrderRecord } from '../../db/repositories/commerce-orders';
import type { ProductRecord } from '../../db/repositories/commerce-products';

/** The spec's CommerceOrder: `attributedTo` is null when no click earned the order. */
export function orderView(order: OrderRecord) {
  const attributed = order.attributedCampaignId !== null || order.attributedAutomationId !== null;
  return {
    id: order.id,
    source: order.source,
    connectionId: order.connectionId,
    externalId: order.externalId,
    contactId: order.contactId,
    status: order.status,
    total: amountFromText(order.total),
    refunded: amountFromText(order.refunded),
    currency: order.currency,
    placedAt: order.placedAt.toISOString(),
    attributedMessageId: order.attributedMessageId,
    attributedTo: attributed ? { campaignId: order.attributedCampaignId, automationId: order.attributedAutomationId } : null,
    items: order.items,
    test: order.test,
  };
}

export function productView(product: ProductRecord) {
  return {
    id: product.id,
    externalId: product.externalId,
    title: product.title,
    description: product.description,
    imageUrl: product.imageUrl,
    price: product.price === null ? null : displayAmount(product.price),
    currency: product.currency,
    url: product.url,
    source: product.source,
    updatedAt: product.updatedAt.toISOString(),
  };
}
