import { z } from 'zod';
import { ATTRIBUTION_MODELS } from '../../core/attribution/models';
import { AMOUNT_DECIMALS, CURRENCY_CODES, isAmount, MAX_AMOUNT, normaliseCurrency } from '../../core/commerce/money';
import { EMAIL_ADDRESS, HTTPS_URL_PATTERN, offset, text } from '../http/formats';

/** Most items one order carries, and most products one PUT upserts: a store's page of either. */
export const MAX_ORDER_ITEMS = 500;
export const MAX_PRODUCTS_PER_BATCH = 1000;

const amount = z
  .number()
  .refine(isAmount, `A number from 0 to ${MAX_AMOUNT} with at most ${AMOUNT_DECIMALS} decimals`)
  // multipleOf says "at most 4 decimals" in the document, so generated amounts are ones the store keeps.
  .meta({ minimum: 0, maximum: MAX_AMOUNT, multipleOf: 10 ** -AMOUNT_DECIMALS });

const currency = z
  .string()
  .transform((value, context) => {
    const code = normaliseCurrency(value);
    if (code) return code;
    context.addIssue({ code: 'custom', message: 'An ISO 4217 currency code such as USD or EUR' });
    return z.NEVER;
  })
  .describe('A current ISO 4217 code (USD, EUR...), stored upper-case; the lower-case form is accepted too')
  // The document lists the codes the route accepts (the runtime's list), rather than any three letters.
  .meta({ enum: [...CURRENCY_CODES] });

const externalId = text(255).describe('The store\'s own id');

const OrderItem = z.object({
  title: text(500),
  quantity: z.number().positive().max(1_000_000),
  price: amount.nullable().optional().describe('Unit price, major unit'),
  productId: z.string().min(1).max(255).nullable().optional().describe('The product\'s externalId'),
});

export const CreateOrderBody = z
  .object({
    externalId,
    contactId: z.uuid().optional().describe('The buyer (or email)'),
    email: z.string().max(320).meta({ pattern: EMAIL_ADDRESS }).optional().describe('The buyer\'s address: the contact owning it, or none (the order keeps no contact)'),
    total: amount.describe('Gross total, major unit of the currency'),
    currency,
    placedAt: z.iso.datetime({ offset: true }),
    items: z.array(OrderItem).max(MAX_ORDER_ITEMS).default([]),
    refunded: amount.default(0).describe('Refunded so far; reported apart, never subtracted from revenue'),
    test: z.boolean().default(false).describe('A test checkout: stored, excluded from every report'),
  })
  .meta({ id: 'CommerceOrderRequest' });
export type CreateOrderInput = z.infer<typeof CreateOrderBody>;

export const OrderParams = z.object({ id: z.uuid() });

export const OrderListQuery = z.object({
  limit: z.coerce.number().int().min(1).max(100).default(50),
  cursor: z.string().max(200).optional().describe('nextCursor of the previous page'),
});

const ProductInput = z.object({
  externalId,
  title: text(500),
  description: z.string().max(10_000).nullable().optional(),
  imageUrl: z.string().max(2048).meta({ pattern: HTTPS_URL_PATTERN }).nullable().optional(),
  price: amount.nullable().optional(),
  currency: currency.nullable().optional(),
  url: z.string().max(2048).meta({ pattern: HTTPS_URL_PATTERN }).nullable().optional(),
});

export const UpsertProductsBody = z
  .object({ products: z.array(ProductInput).min(1).max(MAX_PRODUCTS_PER_BATCH) })
  .meta({ id: 'CommerceProductsRequest' });
export type UpsertProductsInput = z.infer<typeof UpsertProductsBody>;

export const ProductParams = z.object({ externalId: z.string().min(1).max(255) });
export const ProductListQuery = z.object({ limit: z.coerce.number().int().min(1).max(100).default(50), offset: offset() });

export const SettingsBody = z
  .object({ attributionWindowDays: z.int().min(1).max(90).describe('Days before an order in which a content click earns it') })
  .meta({ id: 'CommerceSettingsRequest' });

export const EntityParams = z.object({ id: z.uuid() });

const model = z.enum(ATTRIBUTION_MODELS).default('last_content_click').describe('last_content_click (the spec\'s, stored with each order) or first_touch, last_touch, linear (computed on read)');
export const RevenueQuery = z.object({ model });
export const WorkspaceRevenueQuery = z
  .object({
    model,
    from: z.iso.datetime({ offset: true }).optional().describe('Orders placed at or after; 30 days before until when absent'),
    until: z.iso.datetime({ offset: true }).optional().describe('Orders placed before; now when absent'),
  })
  .refine((query) => !query.from || !query.until || Date.parse(query.from) < Date.parse(query.until), { message: 'from must be before until', path: ['from'] });

// Responses.
export const CommerceAcceptedSchema = z.object({ status: z.literal('accepted'), id: z.uuid().describe('The order (GET /commerce/orders/:id)') }).meta({ id: 'CommerceAccepted' });

export const CommerceOrderSchema = z
  .object({
    id: z.uuid(),
    source: z.enum(['store', 'api']),
    connectionId: z.uuid().nullable(),
    externalId: z.string(),
    contactId: z.uuid().nullable(),
    status: z.enum(['placed', 'fulfilled', 'cancelled']),
    total: z.number(),
    refunded: z.number(),
    currency: z.string(),
    placedAt: z.string(),
    attributedMessageId: z.string().nullable(),
    attributedTo: z.object({ campaignId: z.uuid().nullable(), automationId: z.uuid().nullable() }).nullable(),
    items: z.array(z.object({ title: z.string(), quantity: z.number(), price: z.number().nullable(), productId: z.string().nullable() })),
    test: z.boolean().describe('A test checkout (excluded from reports)'),
  })
  .meta({ id: 'CommerceOrder' });

export const CommerceOrderListSchema = z
  .object({ orders: z.array(CommerceOrderSchema), nextCursor: z.string().nullable() })
  .meta({ id: 'CommerceOrderList' });

export const CommerceProductSchema = z
  .object({
    id: z.uuid(),
    externalId: z.string(),
    title: z.string(),
    description: z.string().nullable(),
    imageUrl: z.string().nullable(),
    price: z.string().nullable(),
    currency: z.string().nullable(),
    url: z.string().nullable(),
    source: z.string(),
    updatedAt: z.string(),
  })
  .meta({ id: 'CommerceProduct' });

export const CommerceProductListSchema = z.object({ products: z.array(CommerceProductSchema) }).meta({ id: 'CommerceProductList' });
export const CommerceUpsertResultSchema = z.object({ upserted: z.int() }).meta({ id: 'CommerceUpsertResult' });
export const CommerceDeleteResultSchema = z.object({ deleted: z.literal(true) }).meta({ id: 'CommerceDeleteResult' });
export const CommerceSettingsSchema = z.object({ attributionWindowDays: z.int() }).meta({ id: 'CommerceSettings' });

const CurrencyBreakdownSchema = z.object({
  currency: z.string(),
  revenue: z.number(),
  refunded: z.number(),
  orders: z.int(),
  averageOrderValue: z.number().nullable(),
});

const summaryFields = {
  orders: z.int(),
  revenue: z.number().nullable(),
  refunded: z.number().nullable(),
  currency: z.string().nullable(),
  averageOrderValue: z.number().nullable(),
  revenuePerRecipient: z.number().nullable(),
  byCurrency: z.array(CurrencyBreakdownSchema),
};

export const RevenueReportSchema = z
  .object({ ...summaryFields, attribution: z.object({ model: z.enum(ATTRIBUTION_MODELS), windowDays: z.int() }) })
  .meta({ id: 'RevenueReport' });

export const ContactCommerceSchema = z
  .object({
    contactId: z.uuid(),
    ordersCount: z.int(),
    totalSpent: z.number().nullable(),
    currency: z.string().nullable(),
    averageOrderValue: z.number().nullable(),
    byCurrency: z.array(CurrencyBreakdownSchema),
    firstOrderAt: z.string().nullable(),
    lastOrderAt: z.string().nullable(),
    recentOrders: z.array(CommerceOrderSchema),
  })
  .meta({ id: 'ContactCommerce' });

const LiftGroupSchema = z.object({
  recipients: z.int().describe('Contacts of the group in the campaign\'s snapshot'),
  converters: z.int().describe('Those with at least one conversion in the window'),
  conversions: z.int().describe('Their conversions in the window (any source; those of cancelled or test orders excluded)'),
  conversionRate: z.number().min(0).max(1).nullable().describe('converters / recipients; null for an empty group'),
  byCurrency: z
    .array(
      z.object({
        currency: z.string(),
        orders: z.int(),
        revenue: z.number().describe('Totals of the group\'s orders placed in the window (cancelled and test excluded; refunds not subtracted)'),
        revenuePerRecipient: z.number().describe('revenue / recipients, rounded to the cent'),
      }),
    )
    .describe('Per currency, highest revenue first; amounts are never added across currencies'),
});

export const CampaignLiftSchema = z
  .object({
    campaignId: z.uuid(),
    holdoutPercent: z.int(),
    window: z
      .object({
        from: z.iso.datetime().describe('When the campaign started'),
        until: z.iso.datetime().describe('from + days: later conversions and orders are not counted'),
        days: z.int().describe('The workspace\'s attribution window (GET /commerce/settings)'),
        complete: z.boolean().describe('Whether the window has ended (before, the figures still grow)'),
      })
      .nullable()
      .describe('null until the campaign starts (both groups are empty then)'),
    sent: LiftGroupSchema.describe('The recipients sent to'),
    holdout: LiftGroupSchema.describe('The recipients held out (never sent to)'),
    lift: z
      .number()
      .nullable()
      .describe('(sent.conversionRate − holdout.conversionRate) / holdout.conversionRate; null without a holdout or when no held-out contact converted'),
  })
  .meta({ id: 'CampaignLift' });
