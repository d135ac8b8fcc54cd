import { AppError } from '../../core/errors';
import { amountText } from '../../core/commerce/money';
import { normaliseEmail } from '../../core/identities';
import type { Sequelize } from 'sequelize';
import { findOrder, listOrders, type OrderCursor } from '../../db/repositories/commerce-orders';
import { deleteProduct, listProducts, type ProductInput, upsertProducts } from '../../db/repositories/commerce-products';
import { saveAttributionWindow } from '../../db/repositories/commerce-settings';
import { findIdentityOwners } from '../../db/repositories/contact-identities';
import { findContact } from '../../db/repositories/contacts';
import { attributionWindowDays } from '../../db/repositories/conversions';
import { recordOrder } from '../../services/order-recording';
import type { CreateOrderInput, UpsertProductsInput } from './schemas';

const fieldError = (field: string, message: string) => AppError.validation({ formErrors: [], fieldErrors: { [field]: [message] } });

/** The cursor is the last order's placedAt and id, opaque to clients (base64url of JSON). */
export function encodeCursor(cursor: OrderCursor): string {
  return Buffer.from(JSON.stringify([cursor.placedAt.toISOString(), cursor.id])).toString('base64url');
}

export function decodeCursor(text: string): OrderCursor {
  try {
    const [placedAt, id] = JSON.parse(Buffer.from(text, 'base64url').toString('utf8')) as [unknown, unknown];
    const at = new Date(String(placedAt));
    if (typeof id === 'string' && /^[0-9a-f-]{36}$/i.test(id) && !Number.isNaN(at.getTime())) return { placedAt: at, id };
  } catch {
    // Falls through to the validation error: a cursor the client made up is a bad input, not a server fault.
  }
  throw fieldError('cursor', 'Not a cursor this API returned');
}

/**
 * Orders, products and settings of POST/GET/PUT/DELETE /commerce/*. An order is written with its attribution
 * and its conversion in one transaction (services/order-recording.ts).
 */
export async function buyerOf(db: Sequelize, workspaceId: string, input: CreateOrderInput): Promise<string | null> {
  if (input.contactId) {
    if (!(await findContact(db, workspaceId, input.contactId))) throw AppError.notFound('Contact');
    return input.contactId;
  }
  if (input.email === undefined) return null;
  const email = normaliseEmail(input.email);
  if (!email.ok) throw fieldError('email', email.reason);
  // An order never creates a contact: a guest checkout stays unattributed until the store names the buyer.
  const [owner] = await findIdentityOwners(db, workspaceId, [{ channel: 'email', address: email.address }]);
  return owner?.contactId ?? null;
}

export async function placeOrder(db: Sequelize, workspaceId: string, input: CreateOrderInput): Promise<{ id: string; created: boolean }> {
  const contactId = await buyerOf(db, workspaceId, input);
  const { order, created } = await recordOrder(db, workspaceId, {
    source: 'api',
    connectionId: null,
    externalId: input.externalId,
    contactId,
    // The spec: orders written through the API are always placed (a store connection moves its own).
    status: 'placed',
    total: amountText(input.total),
    refunded: amountText(input.refunded),
    currency: input.currency,
    placedAt: new Date(input.placedAt),
    items: input.items.map((item) => ({ title: item.title, quantity: item.quantity, price: item.price ?? null, productId: item.productId ?? null })),
    test: input.test,
  });
  return { id: order.id, created };
}

export async function getOrder(db: Sequelize, workspaceId: string, orderId: string) {
  const order = await findOrder(db, workspaceId, orderId);
  if (!order) throw AppError.notFound('Order');
  return order;
}

export async function orderPage(db: Sequelize, workspaceId: string, page: { limit: number; cursor?: string }) {
  const after = page.cursor === undefined ? null : decodeCursor(page.cursor);
  // One more than the page: whether it exists says if there is a next page, without a count.
  const rows = await listOrders(db, workspaceId, { limit: page.limit + 1, after });
  const orders = rows.slice(0, page.limit);
  const last = orders[orders.length - 1];
  return { orders, nextCursor: rows.length > page.limit && last ? encodeCursor({ placedAt: last.placedAt, id: last.id }) : null };
}

export async function saveProducts(db: Sequelize, workspaceId: string, input: UpsertProductsInput): Promise<number> {
  // One entry per external id, the last one given winning: one statement may not change a row twice.
  const byExternalId = new Map<string, ProductInput>();
  for (const product of input.products) {
    byExternalId.set(product.externalId, {
      externalId: product.externalId,
      title: product.title,
      description: product.description ?? null,
      imageUrl: product.imageUrl ?? null,
      price: product.price === undefined || product.price === null ? null : amountText(product.price),
      currency: product.currency ?? null,
      url: product.url ?? null,
    });
  }
  return upsertProducts(db, workspaceId, [...byExternalId.values()]);
}

export async function removeProduct(db: Sequelize, workspaceId: string, externalId: string): Promise<void> {
  if (!(await deleteProduct(db, workspaceId, externalId))) throw AppError.notFound('Product');
}

export function createCommerceService(db: Sequelize) {
  return {
    placeOrder: (workspaceId: string, input: CreateOrderInput) => placeOrder(db, workspaceId, input),
    order: (workspaceId: string, orderId: string) => getOrder(db, workspaceId, orderId),
    orders: (workspaceId: string, page: { limit: number; cursor?: string }) => orderPage(db, workspaceId, page),
    upsertProducts: (workspaceId: string, input: UpsertProductsInput) => saveProducts(db, workspaceId, input),
    deleteProduct: (workspaceId: string, externalId: string) => removeProduct(db, workspaceId, externalId),
    products: (workspaceId: string, page: { limit: number; offset: number }) => listProducts(db, workspaceId, page),

    attributionWindow: (workspaceId: string) => attributionWindowDays(db, workspaceId),

    setAttributionWindow: (workspaceId: string, days: number) => saveAttributionWindow(db, workspaceId, days),
  };
}

export type CommerceService = ReturnType<typeof createCommerceService>;
