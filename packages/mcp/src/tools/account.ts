import { z } from 'zod';
import { unwrap } from '@messaging-backend/client';
import { defineTool } from '../tool';

export const listDomains = defineTool({
  name: 'list_domains',
  title: 'List sending domains',
  description:
    'The workspace\'s sending domains with their status (verified, pending, failed) and default sender. send_email\'s from must be an ' +
    'address on a verified one. The DNS records to publish are left out (see the dashboard or the API\'s GET /domains/:id).',
  access: ['domains:write'],
  input: z.object({}),
  annotations: { readOnlyHint: true },
  run: async ({ client }) => {
    const { domains } = await unwrap(client.GET('/api/v1/domains'));
    return {
      domains: domains.map(({ id, name, status, defaultFromAddress, defaultFromName, inboundEnabled, detail, verifiedAt }) => ({
        id,
        name,
        status,
        defaultFromAddress,
        defaultFromName,
        inboundEnabled,
        detail,
        verifiedAt,
      })),
    };
  },
});

export const getUsage = defineTool({
  name: 'get_usage',
  title: 'Get usage against the plan',
  description: 'Messages sent this month (or the month asked for) against the plan\'s quota, by channel, kind and day; check it before a large send.',
  access: 'any-key',
  input: z.object({ period: z.string().regex(/^\d{4}-(0[1-9]|1[0-2])$/).optional().describe('A month as YYYY-MM; the current one when left out') }),
  annotations: { readOnlyHint: true },
  run: async ({ client }, query) => unwrap(client.GET('/api/v1/usage', { params: { query } })),
});
