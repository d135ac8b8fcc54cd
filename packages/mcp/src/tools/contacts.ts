import { z } from 'zod';
import { unwrap } from '@messaging-backend/client';
import { defineTool } from '../tool';
import { Id } from './inputs';

export const searchContacts = defineTool({
  name: 'search_contacts',
  title: 'Search contacts',
  description:
    'Find contacts of the workspace, newest first: by free text (q: part of an address, first name, last name or name), by one exact ' +
    'address (email, phone or chat id, optionally on one channel), by tag, list or segment, or by attribute (key:value). ' +
    'Answers { data: [contact with its identities and attributes], total, page, pageSize }; ask the next page while page * pageSize < total. ' +
    'A contact\'s id is what send_message takes as contactId.',
  access: ['contacts:read'],
  input: z.object({
    q: z.string().min(1).max(200).optional().describe('Case-insensitive text in an address, firstName, lastName or name'),
    address: z.string().min(1).max(320).optional().describe('One identity address, matched exactly (normalised)'),
    channel: z.enum(['email', 'whatsapp', 'telegram']).optional().describe('With address: only identities on this channel'),
    tagId: Id('Only contacts with this tag').optional(),
    listId: Id('Only members of this list').optional(),
    segmentId: Id('Only contacts the segment matches now').optional(),
    attribute: z.array(z.string().regex(/^[^:]+:/, 'Expected key:value')).max(10).optional().describe('key:value filters, all must match (vip:true)'),
    page: z.number().int().min(1).default(1),
    pageSize: z.number().int().min(1).max(200).default(20),
  }),
  annotations: { readOnlyHint: true },
  run: async ({ client }, query) => unwrap(client.GET('/api/v1/contacts', { params: { query } })),
});
