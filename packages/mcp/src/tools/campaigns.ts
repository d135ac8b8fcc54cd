import { z } from 'zod';
import { unwrap } from '@messaging-backend/client';
import { defineTool } from '../tool';
import { Id } from './inputs';

export const listCampaigns = defineTool({
  name: 'list_campaigns',
  title: 'List campaigns',
  description: 'The workspace\'s campaigns, newest first, with their status (draft, scheduled, sending, sent, ...). A draft\'s id is what estimate_campaign takes.',
  access: ['campaigns:read'],
  input: z.object({ limit: z.number().int().min(1).max(100).default(20), offset: z.number().int().min(0).default(0) }),
  annotations: { readOnlyHint: true },
  run: async ({ client }, query) => unwrap(client.GET('/api/v1/campaigns', { params: { query } })),
});

export const estimateCampaign = defineTool({
  name: 'estimate_campaign',
  title: 'Estimate a campaign',
  description:
    'Who a draft campaign would reach if sent now: members of its list or segment, recipients (by channel), those held out or excluded, ' +
    'and a sample of addresses. It sends nothing. It answers a confirmationToken, valid 10 minutes and voided by any edit of the campaign: ' +
    'show the estimate to the user, and only with their go-ahead call send_campaign with that token.',
  access: ['campaigns:write'],
  input: z.object({ campaignId: Id('The draft campaign (list_campaigns)') }),
  annotations: { readOnlyHint: true },
  run: async ({ client }, { campaignId }) => unwrap(client.POST('/api/v1/campaigns/{id}/estimate', { params: { path: { id: campaignId } } })),
});

export const sendCampaign = defineTool({
  name: 'send_campaign',
  title: 'Send a campaign now',
  description:
    'Start sending a draft campaign to its whole audience now. This cannot be undone once messages go out. It needs the confirmationToken ' +
    'that estimate_campaign answered for this campaign in the last 10 minutes: without it, or with a token that is wrong, expired or made ' +
    'before an edit, the send is refused (confirmation_required / confirmation_invalid) and nothing is sent. ' +
    'Answers { id, status, recipients }.',
  access: ['campaigns:write'],
  input: z.object({
    campaignId: Id('The draft campaign'),
    confirmationToken: z.string().min(1).max(200).describe('From estimate_campaign for this campaign; required'),
  }),
  annotations: { destructiveHint: true, idempotentHint: false, openWorldHint: true },
  // Only an immediate send, which the API guards with the token; a schedule further out would not need one.
  run: async ({ client }, { campaignId, confirmationToken }) =>
    unwrap(client.POST('/api/v1/campaigns/{id}/send', { params: { path: { id: campaignId } }, body: { confirmationToken } })),
});
