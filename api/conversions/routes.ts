import { ok, type RouteTable } from '../http/route';
import {
  ContactConversionListSchema,
  ContactConversionQuery,
  ConversionStatsQuery,
  EntityConversionQuery,
  EntityConversionsSchema,
  EntityParams,
  SummaryQuery,
  TouchCsvSchema,
  TouchListQuery,
  UtmConversionListSchema,
  UtmConversionQuery,
  UtmConversionStatsSchema,
  UtmSummarySchema,
  UtmTouchListSchema,
} from './schemas';
import type { ConversionService } from './service';

/** Reads take `utm:read` (decisions.md: commerce, conversions and attribution). */
export function conversionRoutes(routes: RouteTable, conversions: ConversionService): void {
  routes.get('/utm/touches', 'utm:read', {
    cost: 'search',
    summary: 'People\'s clicks on tagged links, newest first, paged and filtered; format=csv streams them all as CSV',
    query: TouchListQuery,
    responses: { 200: { description: 'UtmTouchList, or text/csv with format=csv', schema: UtmTouchListSchema, alsoAs: { 'text/csv': TouchCsvSchema } } },
    handle: async ({ principal, query }) => {
      const filters = {
        source: query.source,
        medium: query.medium,
        campaign: query.campaign,
        contactId: query.contactId,
        from: query.from ? new Date(query.from) : undefined,
        until: query.until ? new Date(query.until) : undefined,
      };
      if (query.format === 'csv') return { status: 200, stream: (res) => conversions.touchCsv(principal.workspaceId, filters, res) };
      return ok(await conversions.touches(principal.workspaceId, filters, query));
    },
  });

  routes.get('/utm/summary', 'utm:read', {
    cost: 'search',
    summary: 'Conversions by the UTM source, medium and campaign of their first or last touch',
    query: SummaryQuery,
    responses: { 200: { description: 'UtmSummary', schema: UtmSummarySchema } },
    handle: async ({ principal, query }) => ok(await conversions.summary(principal.workspaceId, query.attribution, query)),
  });

  routes.get('/utm/conversions', 'utm:read', {
    cost: 'search',
    summary: 'Conversions, newest first, with the UTM values of their first or last touch',
    query: UtmConversionQuery,
    responses: { 200: { description: 'UtmConversionList', schema: UtmConversionListSchema } },
    handle: async ({ principal, query }) => ok(await conversions.conversions(principal.workspaceId, query.attribution, query)),
  });

  routes.get('/utm/conversions/stats', 'utm:read', {
    cost: 'search',
    summary: 'Conversions by name: count, contacts, value, average time to convert and touchpoints, first and last',
    query: ConversionStatsQuery,
    responses: { 200: { description: 'UtmConversionStats', schema: UtmConversionStatsSchema } },
    handle: async ({ principal, query }) => ok(await conversions.stats(principal.workspaceId, query.attribution, query)),
  });

  routes.get('/contacts/:id/conversions', 'utm:read', {
    summary: 'A contact\'s conversions, newest first, each with its touches in the lookback window',
    params: EntityParams,
    query: ContactConversionQuery,
    responses: { 200: { description: 'ContactConversionList (each row also a ConversionRow)', schema: ContactConversionListSchema }, 404: { description: 'No such contact' } },
    handle: async ({ principal, params, query }) => ok(await conversions.ofContact(principal.workspaceId, params.id, query)),
  });

  routes.get('/campaigns/:id/conversions', 'utm:read', {
    summary: 'The conversions a campaign earned: its messages held the first or last touch',
    params: EntityParams,
    query: EntityConversionQuery,
    responses: { 200: { description: 'EntityConversions', schema: EntityConversionsSchema }, 404: { description: 'No such campaign' } },
    handle: async ({ principal, params, query }) => ok(await conversions.ofEntity(principal.workspaceId, { campaignId: params.id }, query.attribution)),
  });

  routes.get('/automations/:id/conversions', 'utm:read', {
    summary: 'The conversions an automation earned: its messages held the first or last touch',
    params: EntityParams,
    query: EntityConversionQuery,
    responses: { 200: { description: 'EntityConversions', schema: EntityConversionsSchema }, 404: { description: 'No such automation' } },
    handle: async ({ principal, params, query }) => ok(await conversions.ofEntity(principal.workspaceId, { automationId: params.id }, query.attribution)),
  });
}
