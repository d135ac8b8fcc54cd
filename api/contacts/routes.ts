import { ValidationErrorSchema } from '../http/openapi';
import { created, ok, type RouteTable } from '../http/route';
import {
  ContactDeletedSchema,
  ContactDetailSchema,
  ContactJourneySchema,
  ContactListQuery,
  ContactListSchema,
  ContactParams,
  ContactTagsAddedSchema,
  ContactTagsBody,
  ContactTagsRemovedSchema,
  ContactUpsertedSchema,
  JourneyQuery,
  UpsertContactBody,
} from './schemas';
import { ContactCsvSchema, ContactDataExportSchema, ContactExportQuery } from './export-schemas';
import type { ContactService } from './service';
import { type TelegramLink, TelegramLinkSchema } from './telegram-link';
import { contactDetailView, contactUpsertedView, contactView } from './views';

export function contactRoutes(routes: RouteTable, contacts: ContactService, telegramLinks: (workspaceId: string, contactId: string) => Promise<TelegramLink>): void {
  routes.get('/contacts', 'contacts:read', {
    cost: 'search',
    summary: 'List contacts, newest first, with filters',
    query: ContactListQuery,
    responses: {
      200: { description: 'One page of contacts and the total that match', schema: ContactListSchema },
      404: { description: 'segmentId names no segment of this workspace' },
    },
    handle: async ({ principal, query }) => {
      const { rows, identities, total } = await contacts.list(principal.workspaceId, query);
      return ok({ data: rows.map((row) => contactView(row, identities)), total, page: query.page, pageSize: query.pageSize });
    },
  });

  // Before /contacts/:id, which would take `export` for an id.
  routes.get('/contacts/export', 'contacts:read', {
    cost: 'heavy',
    summary: 'Export contacts as CSV (streamed): every contact of the workspace, or of a list, tag or segment',
    query: ContactExportQuery,
    responses: {
      200: { description: 'The CSV, one row per contact in id order (text/csv; attachment contacts.csv)', alsoAs: { 'text/csv': ContactCsvSchema } },
      404: { description: 'segmentId names no segment of this workspace' },
      422: { description: 'A filter is not a uuid', schema: ValidationErrorSchema },
    },
    handle: async ({ principal, query }) => ({ status: 200, stream: await contacts.exports.csv(principal.workspaceId, query) }),
  });

  routes.post('/contacts', 'contacts:write', {
    summary: 'Create a contact, or update the one that owns these identities (natural key)',
    body: UpsertContactBody,
    responses: {
      201: { description: 'Created', schema: ContactUpsertedSchema },
      200: { description: 'An existing contact owns an identity: merged (created false)', schema: ContactUpsertedSchema },
      409: { description: 'ambiguous_identities (contactIds): the identities belong to different contacts; the only 409 of this route' },
      422: {
        description: 'Invalid body; an invalid address or attribute names its field (identities[0].address), as does an address of an erased contact until DELETE /suppressions/:address',
        schema: ValidationErrorSchema,
      },
    },
    handle: async ({ principal, body }) => {
      const outcome = await contacts.upsert(principal.workspaceId, body);
      return outcome.created ? created(contactUpsertedView(outcome)) : ok(contactUpsertedView(outcome));
    },
  });

  routes.get('/contacts/:id', 'contacts:read', {
    summary: 'A contact with its identities, tags and lists',
    params: ContactParams,
    responses: { 200: { description: 'The contact', schema: ContactDetailSchema }, 404: { description: 'No such contact' } },
    handle: async ({ principal, params }) => ok(contactDetailView(await contacts.detail(principal.workspaceId, params.id))),
  });

  routes.get('/contacts/:id/export', 'contacts:read', {
    summary: 'Everything held about one contact, as a JSON attachment (a data-subject access or portability request)',
    params: ContactParams,
    responses: { 200: { description: 'The contact\'s data (attachment contact-<id>.json), each section bounded', schema: ContactDataExportSchema }, 404: { description: 'No such contact' } },
    handle: async ({ principal, params }) => {
      const data = await contacts.exports.person(principal.workspaceId, params.id);
      return {
        status: 200,
        stream: async (res) => {
          res.setHeader('content-disposition', `attachment; filename="contact-${params.id}.json"`);
          res.json(data);
        },
      };
    },
  });

  routes.delete('/contacts/:id', 'contacts:write', {
    summary: 'Erase a contact: identities, attributes, tags, list memberships and events; its addresses stay suppressed',
    params: ContactParams,
    responses: { 200: { description: 'Erased', schema: ContactDeletedSchema }, 404: { description: 'No such contact' } },
    handle: async ({ principal, params }) => {
      const { suppressed } = await contacts.erase(principal.workspaceId, params.id);
      return ok({ deleted: true, id: params.id, suppressed });
    },
  });

  routes.post('/contacts/:id/telegram-link', 'contacts:write', {
    summary: 'A t.me deep link that verifies the contact\'s Telegram identity when the person presses Start',
    params: ContactParams,
    responses: { 200: { description: 'The link', schema: TelegramLinkSchema }, 404: { description: 'No such contact' }, 409: { description: 'No Telegram bot connected' } },
    handle: async ({ principal, params }) => ok(await telegramLinks(principal.workspaceId, params.id)),
  });

  routes.post('/contacts/:id/tags', 'contacts:write', {
    summary: 'Add tags to a contact, by id or by name (names are created when missing)',
    params: ContactParams,
    body: ContactTagsBody,
    responses: {
      200: { description: 'Added; a repeat adds 0', schema: ContactTagsAddedSchema },
      404: { description: 'No such contact' },
      422: { description: 'A tag id that is not a tag of this workspace (tags[i])', schema: ValidationErrorSchema },
    },
    handle: async ({ principal, params, body }) => ok(await contacts.addTags(principal.workspaceId, params.id, body.tags)),
  });

  routes.delete('/contacts/:id/tags', 'contacts:write', {
    summary: 'Remove tags from a contact, by id or by name',
    params: ContactParams,
    body: ContactTagsBody,
    responses: { 200: { description: 'Removed; a repeat removes 0', schema: ContactTagsRemovedSchema }, 404: { description: 'No such contact' } },
    handle: async ({ principal, params, body }) => ok(await contacts.removeTags(principal.workspaceId, params.id, body.tags)),
  });

  routes.get('/contacts/:id/journey', 'contacts:read', {
    summary: 'The contact\'s timeline, newest first: sends of every kind with their engagement, touches, conversions, journeys, received mail, notes',
    params: ContactParams,
    query: JourneyQuery,
    responses: {
      200: { description: 'A page of entries, and nextCursor for the next (null at the end)', schema: ContactJourneySchema },
      404: { description: 'No such contact' },
      422: { description: 'A cursor this timeline did not give (cursor)', schema: ValidationErrorSchema },
    },
    handle: async ({ principal, params, query }) => {
      const { entries, nextCursor } = await contacts.journey(principal.workspaceId, params.id, query);
      return ok({ data: entries.map((entry) => ({ ...entry, at: entry.at.toISOString() })), nextCursor });
    },
  });
}
