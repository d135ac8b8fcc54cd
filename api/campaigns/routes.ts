import { LinkStatListSchema } from '../http/message-schemas';
import { literalOrRead } from '../../core/scopes';
import { linkStatsView } from '../http/message-views';
import { InputErrorSchema, QUOTA_EXCEEDED_RESPONSE } from '../http/openapi';
import { created, ok, type RouteTable } from '../http/route';
import {
  CampaignDetailSchema,
  CampaignEstimateSchema,
  CampaignListQuery,
  CampaignListSchema,
  CampaignParams,
  CampaignSendResultSchema,
  CreateCampaignBody,
  SendCampaignBody,
  UpdateCampaignBody,
} from './schemas';
import type { CampaignSending } from './sending';
import type { CampaignService } from './service';
import { campaignDetailView, campaignView } from './views';

const NOT_FOUND = { description: 'No such campaign' };
const NOT_NOW = { description: 'conflict: the campaign is not in a status that allows this' };

export function campaignRoutes(routes: RouteTable, campaigns: CampaignService, sending: CampaignSending): void {
  const detail = async (workspaceId: string, campaignId: string) => {
    const campaign = await campaigns.get(workspaceId, campaignId);
    const [counters, skipped] = await Promise.all([campaigns.countersOf(workspaceId, campaignId), campaigns.skipped(campaign)]);
    return campaignDetailView(campaign, counters, skipped, new Date());
  };
  const reply = async (campaign: { workspaceId: string; id: string }) => ok(await detail(campaign.workspaceId, campaign.id));

  routes.get('/campaigns', literalOrRead('campaigns:write'), {
    summary: 'List campaigns, newest first; ?metrics=1 adds each one\'s metrics',
    query: CampaignListQuery,
    responses: { 200: { description: 'Campaigns', schema: CampaignListSchema } },
    handle: async ({ principal, query }) => {
      const metrics = query.metrics === '1' || query.metrics === 'true';
      const { rows, total } = await campaigns.list(principal.workspaceId, { limit: query.limit, offset: query.offset, metrics });
      return ok({ campaigns: rows.map(({ campaign, counters }) => campaignView(campaign, counters)), total, limit: query.limit, offset: query.offset });
    },
  });

  routes.post('/campaigns', 'campaigns:write', {
    summary: 'Create a broadcast campaign (a draft) to a list or a segment',
    body: CreateCampaignBody,
    bodyLimit: 'large',
    responses: {
      201: { description: 'The draft', schema: CampaignDetailSchema },
      422: {
        description: 'Invalid fields, an unknown list or segment, a chat channel without its integration (channel or fallbackChain), template_not_found, an attachment refused, template_invalid (subject, html or text does not parse)',
        schema: InputErrorSchema,
      },
    },
    handle: async ({ principal, body }) => {
      const campaign = await campaigns.create(principal.workspaceId, body);
      return created(await detail(principal.workspaceId, campaign.id));
    },
  });

  routes.get('/campaigns/:id', 'campaigns:read', {
    summary: 'A campaign with its content, metrics and progress',
    params: CampaignParams,
    responses: { 200: { description: 'The campaign', schema: CampaignDetailSchema }, 404: NOT_FOUND },
    handle: async ({ principal, params }) => ok(await detail(principal.workspaceId, params.id)),
  });

  routes.get('/campaigns/:id/links', 'campaigns:read', {
    summary: 'Per-link click statistics of the campaign (human clicks counted, machine clicks reported)',
    params: CampaignParams,
    responses: { 200: { description: 'Links, most unique clicks first', schema: LinkStatListSchema }, 404: NOT_FOUND },
    handle: async ({ principal, params }) => ok(linkStatsView(await campaigns.links(principal.workspaceId, params.id))),
  });

  routes.patch('/campaigns/:id', 'campaigns:write', {
    summary: 'Edit a draft: only the fields present change; voids earlier confirmation tokens',
    params: CampaignParams,
    body: UpdateCampaignBody,
    bodyLimit: 'large',
    responses: {
      200: { description: 'The draft', schema: CampaignDetailSchema },
      404: NOT_FOUND,
      409: { description: 'Not a draft' },
      422: { description: 'Invalid fields, as for POST /campaigns', schema: InputErrorSchema },
    },
    handle: async ({ principal, params, body }) => reply(await campaigns.update(principal.workspaceId, params.id, body)),
  });

  routes.delete('/campaigns/:id', 'campaigns:write', {
    summary: 'Delete a draft; a campaign scheduled, sending or sent stays (409; cancel stops one that has not finished)',
    params: CampaignParams,
    responses: { 204: { description: 'Deleted' }, 404: NOT_FOUND, 409: { description: 'conflict: not a draft' } },
    handle: async ({ principal, params }) => {
      await campaigns.remove(principal.workspaceId, params.id);
      return { status: 204 };
    },
  });

  routes.post('/campaigns/:id/estimate', 'campaigns:write', {
    cost: 'heavy',
    summary: 'Who the campaign reaches now, with the confirmation token an immediate send needs',
    params: CampaignParams,
    responses: { 200: { description: 'The estimate', schema: CampaignEstimateSchema }, 404: NOT_FOUND, 422: { description: 'No list or segment, or a chat channel of the campaign without its integration (fieldErrors name the field)' } },
    handle: async ({ principal, params }) => ok(await campaigns.estimate(principal.workspaceId, params.id, new Date())),
  });

  routes.post('/campaigns/:id/send', 'campaigns:write', {
    cost: 'heavy',
    summary: 'Send now, or schedule; now or within 5 minutes needs the estimate\'s confirmationToken',
    params: CampaignParams,
    body: SendCampaignBody,
    responses: {
      202: { description: 'Accepted: sending, or scheduled', schema: CampaignSendResultSchema },
      402: { ...QUOTA_EXCEEDED_RESPONSE, description: 'quota_exceeded: the audience does not fit the plan\'s quota' },
      403: { description: 'domain_not_verified' },
      404: NOT_FOUND,
      409: { description: 'Not a draft' },
      422: { description: 'confirmation_required, confirmation_invalid, the draft is incomplete or a chat channel has no integration (fieldErrors), or template_invalid (its content does not parse)' },
      503: { description: 'The background workers cannot be reached; the campaign stays a draft' },
    },
    handle: async ({ principal, params, body }) => ({ status: 202, body: await sending.send(principal, params.id, body, new Date()) }),
  });

  routes.post('/campaigns/:id/pause', 'campaigns:write', {
    summary: 'Pause a sending campaign: its waiting messages are held back until it resumes',
    params: CampaignParams,
    responses: { 200: { description: 'Paused', schema: CampaignDetailSchema }, 404: NOT_FOUND, 409: NOT_NOW },
    handle: async ({ principal, params }) => reply(await sending.pause(principal.workspaceId, params.id)),
  });

  routes.post('/campaigns/:id/resume', 'campaigns:write', {
    summary: 'Resume a paused campaign',
    params: CampaignParams,
    responses: { 200: { description: 'Sending', schema: CampaignDetailSchema }, 404: NOT_FOUND, 409: NOT_NOW },
    handle: async ({ principal, params }) => reply(await sending.resume(principal.workspaceId, params.id)),
  });

  routes.post('/campaigns/:id/cancel', 'campaigns:write', {
    summary: 'Cancel a scheduled, sending or paused campaign; its unsent messages become canceled',
    params: CampaignParams,
    responses: { 200: { description: 'Canceled', schema: CampaignDetailSchema }, 404: NOT_FOUND, 409: NOT_NOW },
    handle: async ({ principal, params }) => reply(await sending.cancel(principal.workspaceId, params.id)),
  });
}
