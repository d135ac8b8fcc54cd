import { z } from 'zod';
import { offset } from '../http/formats';

const dateTime = z.iso.datetime({ offset: true });
const attribution = z.enum(['first', 'last']).default('last').describe('Which touch in the lookback window gets the credit: the first or the last');
const utmValue = z.string().min(1).max(500);

export const EntityParams = z.object({ id: z.uuid() });

const period = {
  from: dateTime.optional().describe('Only from this moment (inclusive)'),
  until: dateTime.optional().describe('Only before this moment (exclusive)'),
};

export const TouchListQuery = z.object({
  page: z.coerce.number().int().min(1).max(10_000_000).default(1),
  pageSize: z.coerce.number().int().min(1).max(200).default(50),
  source: utmValue.optional().describe('Exact utm_source'),
  medium: utmValue.optional().describe('Exact utm_medium'),
  campaign: utmValue.optional().describe('Exact utm_campaign'),
  contactId: z.uuid().optional().describe('One contact\'s touches'),
  ...period,
  format: z.enum(['json', 'csv']).default('json').describe('csv streams every matching touch as text/csv (page and pageSize are ignored)'),
});

export const SummaryQuery = z.object({ attribution, ...period });

export const UtmConversionQuery = z.object({
  attribution,
  ...period,
  limit: z.coerce.number().int().min(1).max(100).default(50),
  offset: offset(),
});

export const ConversionStatsQuery = z.object({
  attribution: attribution.describe('Which touch in the lookback window the UTM filters match: the first or the last'),
  ...period,
  source: utmValue.optional().describe('Only conversions whose credited touch has this exact utm_source'),
  medium: utmValue.optional().describe('Exact utm_medium of the credited touch'),
  campaign: utmValue.optional().describe('Exact utm_campaign of the credited touch'),
});

export const ContactConversionQuery = z.object({
  limit: z.coerce.number().int().min(1).max(100).default(50),
  offset: offset(),
});

export const EntityConversionQuery = z.object({ attribution });

const nullableText = z.string().nullable();
const CurrencyBucketSchema = z.object({ currency: nullableText, conversions: z.int(), revenueCents: z.int() }).meta({ id: 'ConversionCurrency' });
const money = {
  revenueCents: z.int().describe('Sum of valueCents; with mixed currencies (currency null) a sum of hundredths across them, not an amount: read byCurrency'),
  currency: nullableText.describe('The one currency of the conversions; null with mixed currencies or none named'),
  byCurrency: z.array(CurrencyBucketSchema).describe('Count and value per currency, highest value first'),
};

export const UtmTouchSchema = z
  .object({
    id: z.uuid(),
    source: nullableText,
    medium: nullableText,
    campaign: nullableText,
    contactId: z.uuid().nullable(),
    messageId: z.uuid().nullable(),
    url: z.string().describe('The clicked link\'s canonical URL (without utm_* parameters)'),
    isContent: z.boolean().describe('A content link (not the logo, images, header/footer or social)'),
    occurredAt: dateTime,
  })
  .meta({ id: 'UtmTouch' });

export const TouchCsvSchema = z
  .string()
  .describe('RFC 4180 with CRLF; header id,occurredAt,contactId,messageId,source,medium,campaign,url,isContent; newest first; a text starting with = + - @ is prefixed with \'');

export const UtmTouchListSchema = z.object({ data: z.array(UtmTouchSchema), total: z.int(), page: z.int(), pageSize: z.int() }).meta({ id: 'UtmTouchList' });

export const UtmSummarySchema = z
  .object({
    attribution: z.enum(['first', 'last']),
    rows: z.array(z.object({ source: nullableText, medium: nullableText, campaign: nullableText, conversions: z.int(), contacts: z.int(), ...money }).meta({ id: 'UtmSummaryRow' })),
    unattributed: z.int().describe('Conversions with no touch in their lookback window'),
  })
  .meta({ id: 'UtmSummary' });

export const UtmConversionListSchema = z
  .object({
    data: z.array(
      z
        .object({
          id: z.uuid(),
          name: z.string(),
          conversionSource: z.enum(['event', 'order', 'analytics']),
          source: nullableText.describe('utm_source of the credited touch'),
          medium: nullableText,
          campaign: nullableText,
          valueCents: z.int().nullable(),
          currency: nullableText,
          contactId: z.uuid().nullable(),
          occurredAt: dateTime,
        })
        .meta({ id: 'UtmConversion' }),
    ),
    total: z.int(),
  })
  .meta({ id: 'UtmConversionList' });

export const UtmConversionStatsSchema = z
  .object({
    data: z.array(
      z
        .object({
          name: z.string().describe('The conversion name (the event, "order", the analytics goal)'),
          conversions: z.int(),
          contacts: z.int().describe('Distinct contacts among them'),
          ...money,
          avgTimeToConvertSeconds: z.int().nullable().describe('Average seconds from the first touch in the lookback window to the conversion, over those with a touch; null when none had one'),
          avgTouchpoints: z.number().nullable().describe('Average touches in the lookback window, over conversions tied to a contact; null when none is'),
          firstAt: dateTime.describe('The earliest of these conversions'),
          lastAt: dateTime.describe('The latest of these conversions'),
        })
        .meta({ id: 'UtmConversionStatsRow' }),
    ).describe('One row per conversion name, most conversions first'),
  })
  .meta({ id: 'UtmConversionStats' });

const ConversionRowFields = {
  id: z.uuid(),
  name: z.string(),
  source: z.enum(['event', 'order', 'analytics']),
  valueCents: z.int(),
  currency: nullableText,
  occurredAt: dateTime,
  contactId: z.uuid().nullable(),
  contactEmail: nullableText,
  touchUrl: nullableText.describe('Canonical URL of the credited touch'),
  touchAt: dateTime.nullable(),
  nodeId: nullableText.describe('The journey node of the credited touch\'s message'),
  secondsFromTouch: z.int().nullable(),
};

export const ConversionRowSchema = z.object(ConversionRowFields).meta({ id: 'ConversionRow' });

export const ContactConversionSchema = z
  .object({
    ...ConversionRowFields,
    firstTouchAt: dateTime.nullable(),
    lastTouchAt: dateTime.nullable(),
    timeToConvertSeconds: z.int().nullable().describe('From the first touch in the lookback window'),
    touchpoints: z.int().describe('Touches in the lookback window'),
    utmSource: nullableText,
    utmMedium: nullableText,
    utmCampaign: nullableText,
    attributedKind: z.enum(['campaign', 'automation', 'transactional', 'event', 'analytics']).nullable(),
  })
  .meta({ id: 'ContactConversion' });

export const ContactConversionListSchema = z
  .object({
    data: z.array(ContactConversionSchema),
    totals: z.object({ conversions: z.int(), ...money }),
    lookbackDays: z.int(),
  })
  .meta({ id: 'ContactConversionList' });

export const EntityConversionsSchema = z
  .object({
    attribution: z.enum(['first', 'last']),
    lookbackDays: z.int(),
    total: z.int(),
    contacts: z.int(),
    ...money,
    byName: z.array(z.object({ name: z.string(), conversions: z.int(), ...money })),
    byLink: z.array(z.object({ url: z.string(), conversions: z.int(), contacts: z.int(), ...money })),
    recent: z.array(ConversionRowSchema).describe('The latest 50'),
  })
  .meta({ id: 'EntityConversions' });
