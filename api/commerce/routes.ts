import { ok, type RouteTable } from '../http/route';
import type { RevenueReports } from './reports';
import {
  CommerceAcceptedSchema,
  CommerceDeleteResultSchema,
  CommerceOrderListSchema,
  CommerceOrderSchema,
  CommerceProductListSchema,
  CommerceSettingsSchema,
  CommerceUpsertResultSchema,
  ContactCommerceSchema,
  CreateOrderBody,
  EntityParams,
  OrderListQuery,
  OrderParams,
  ProductListQuery,
  ProductParams,
  RevenueQuery,
  RevenueReportSchema,
  SettingsBody,
  UpsertProductsBody,
  WorkspaceRevenueQuery,
} from './schemas';
import type { CommerceService } from './service';
import { orderView, productView } from './views';

// decisions.md: commerce writes take integrations:write, every read (orders and reports alike) utm:read.
export function commerceRoutes(routes: RouteTable, commerce: CommerceService, reports: RevenueReports): void {
  routes.post('/commerce/orders', 'integrations:write', {
    summary: 'Record an order (source api, status placed), attributed to the last content click of a marketing message in the window; a repeat externalId updates it',
    body: CreateOrderBody,
    responses: {
      202: { description: 'Stored with its attribution and its conversion', schema: CommerceAcceptedSchema },
      404: { description: 'No such contact (contactId)' },
    },
    handle: async ({ principal, body }) => {
      const { id } = await commerce.placeOrder(principal.workspaceId, body);
      return { status: 202, body: { status: 'accepted', id } };
    },
  });

  routes.get('/commerce/orders', 'utm:read', {
    summary: 'Orders, newest placed first, paged with cursor and limit (test and cancelled ones included)',
    query: OrderListQuery,
    responses: { 200: { description: 'A page of orders', schema: CommerceOrderListSchema } },
    handle: async ({ principal, query }) => {
      const page = await commerce.orders(principal.workspaceId, query);
      return ok({ orders: page.orders.map(orderView), nextCursor: page.nextCursor });
    },
  });

  routes.get('/commerce/orders/:id', 'utm:read', {
    summary: 'An order with the message and the campaign or automation it is attributed to',
    params: OrderParams,
    responses: { 200: { description: 'The order', schema: CommerceOrderSchema }, 404: { description: 'No such order' } },
    handle: async ({ principal, params }) => ok(orderView(await commerce.order(principal.workspaceId, params.id))),
  });

  routes.put('/commerce/products', 'integrations:write', {
    summary: 'Upsert products by externalId (up to 1000 a request; a repeated externalId: the last one wins)',
    body: UpsertProductsBody,
    responses: { 200: { description: 'How many were written', schema: CommerceUpsertResultSchema } },
    handle: async ({ principal, body }) => ok({ upserted: await commerce.upsertProducts(principal.workspaceId, body) }),
  });

  routes.get('/commerce/products', 'utm:read', {
    summary: 'The catalogue, most recently updated first (limit/offset)',
    query: ProductListQuery,
    responses: { 200: { description: 'Products', schema: CommerceProductListSchema } },
    handle: async ({ principal, query }) => ok({ products: (await commerce.products(principal.workspaceId, query)).map(productView) }),
  });

  routes.delete('/commerce/products/:externalId', 'integrations:write', {
    summary: 'Delete a product by its externalId',
    params: ProductParams,
    responses: { 200: { description: 'Deleted', schema: CommerceDeleteResultSchema }, 404: { description: 'No such product' } },
    handle: async ({ principal, params }) => {
      await commerce.deleteProduct(principal.workspaceId, params.externalId);
      return ok({ deleted: true });
    },
  });

  routes.get('/commerce/settings', 'utm:read', {
    summary: 'The attribution window (days before an order in which a content click earns it; 5 unless set)',
    responses: { 200: { description: 'Settings', schema: CommerceSettingsSchema } },
    handle: async ({ principal }) => ok({ attributionWindowDays: await commerce.attributionWindow(principal.workspaceId) }),
  });

  routes.put('/commerce/settings', 'integrations:write', {
    summary: 'Set the attribution window (1 to 90 days); orders written from now on use it',
    body: SettingsBody,
    responses: { 200: { description: 'Settings', schema: CommerceSettingsSchema } },
    handle: async ({ principal, body }) => ok({ attributionWindowDays: await commerce.setAttributionWindow(principal.workspaceId, body.attributionWindowDays) }),
  });

  routes.get('/commerce/revenue', 'utm:read', {
    cost: 'search',
    summary: 'Revenue of the workspace\'s attributed orders placed in [from, until) (default: the last 30 days)',
    query: WorkspaceRevenueQuery,
    responses: { 200: { description: 'The report', schema: RevenueReportSchema } },
    handle: async ({ principal, query }) => ok(await reports.workspace(principal.workspaceId, query, query.model, new Date())),
  });

  routes.get('/campaigns/:id/revenue', 'utm:read', {
    summary: 'Revenue of the orders attributed to the campaign (?model= for first_touch, last_touch, linear)',
    params: EntityParams,
    query: RevenueQuery,
    responses: { 200: { description: 'The report', schema: RevenueReportSchema }, 404: { description: 'No such campaign' } },
    handle: async ({ principal, params, query }) => ok(await reports.campaign(principal.workspaceId, params.id, query.model)),
  });

  routes.get('/automations/:id/revenue', 'utm:read', {
    summary: 'Revenue of the orders attributed to the automation (?model= for first_touch, last_touch, linear)',
    params: EntityParams,
    query: RevenueQuery,
    responses: { 200: { description: 'The report', schema: RevenueReportSchema }, 404: { description: 'No such automation' } },
    handle: async ({ principal, params, query }) => ok(await reports.automation(principal.workspaceId, params.id, query.model)),
  });

  routes.get('/contacts/:id/commerce', 'utm:read', {
    summary: 'A contact\'s orders: count and spend per currency (test and cancelled excluded) and the last 10 orders',
    params: EntityParams,
    responses: { 200: { description: 'The contact\'s commerce', schema: ContactCommerceSchema }, 404: { description: 'No such contact' } },
    handle: async ({ principal, params }) => {
      const commerce = await reports.contact(principal.workspaceId, params.id);
      return ok({ ...commerce, recentOrders: commerce.recentOrders.map(orderView) });
    },
  });
}
