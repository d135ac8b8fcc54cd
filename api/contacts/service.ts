import type { Sequelize } from 'sequelize';
import { AppError } from '../../core/errors';
import { addressCandidates, normaliseAddress } from '../../core/identities';
import { identitiesOf } from '../../db/repositories/contact-identities';
import { type ContactFilters, deleteContact, findContact, listContacts, lockContact } from '../../db/repositories/contacts';
import { listsOfContact } from '../../db/repositories/lists';
import { suppressErased, suppressionsOf } from '../../db/repositories/suppressions';
import { ensureTags, findTags, tagContact, tagsOfContact, untagContact } from '../../db/repositories/tags';
import type { ContactListInput, UpsertContactInput } from './schemas';
import { createContactExports } from './export';
import { segmentCondition } from './segment-condition';
import { contactJourney, type JourneyPageInput } from './timeline';
import { upsertContact } from '../../services/contact-upsert';

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/** What the contact use cases work with. `audienceDb`: the pool of audience queries (db/audience-session.ts), where segment-filtered lists and exports run. */
export interface ContactDeps {
  db: Sequelize;
  audienceDb: Sequelize;
}

export async function requireContact({ db }: ContactDeps, workspaceId: string, contactId: string) {
  const contact = await findContact(db, workspaceId, contactId);
  if (!contact) throw AppError.notFound('Contact');
  return contact;
}

/** The list's query as repository filters, or null when it can match no one. */
export async function filtersOf({ db }: ContactDeps, workspaceId: string, query: ContactListInput): Promise<ContactFilters | null> {
  const filters: ContactFilters = { tagId: query.tagId, listId: query.listId, text: query.q };
  if (query.address) {
    const normalised = query.channel ? normaliseAddress(query.channel, query.address) : null;
    filters.identities = query.channel
      ? normalised?.ok ? [{ channel: query.channel, address: normalised.address }] : []
      : addressCandidates(query.address);
    // An address that is valid on no channel cannot match anyone.
    if (filters.identities.length === 0) return null;
  }
  filters.attributes = query.attribute?.map((pair) => {
    const at = pair.indexOf(':');
    return { key: pair.slice(0, at), value: pair.slice(at + 1) };
  });
  if (query.segmentId) filters.condition = await segmentCondition(db, workspaceId, query.segmentId);
  return filters;
}

export async function contactPage(deps: ContactDeps, workspaceId: string, query: ContactListInput) {
  const { db, audienceDb } = deps;
  const filters = await filtersOf(deps, workspaceId, query);
  const page = { limit: query.pageSize, offset: (query.page - 1) * query.pageSize };
  const { rows, total } = filters ? await listContacts(db, workspaceId, filters, page, audienceDb) : { rows: [], total: 0 };
  const identities = await identitiesOf(db, workspaceId, rows.map((row) => row.id));
  return { rows, identities, total };
}

export async function contactDetail(deps: ContactDeps, workspaceId: string, contactId: string) {
  const { db } = deps;
  const contact = await requireContact(deps, workspaceId, contactId);
  const [identities, tags, lists] = await Promise.all([
    identitiesOf(db, workspaceId, [contactId]),
    tagsOfContact(db, workspaceId, contactId),
    listsOfContact(db, workspaceId, contactId),
  ]);
  return { contact, identities, tags, lists, suppressions: await suppressionsOf(db, workspaceId, identities) };
}

/** Erases the person: the contact row and, by cascade, everything hanging off it; the addresses stay suppressed. */
export async function eraseContact({ db }: ContactDeps, workspaceId: string, contactId: string): Promise<{ suppressed: number }> {
  return db.transaction(async (transaction) => {
    const identities = await deleteContact(db, workspaceId, contactId, transaction);
    if (!identities) throw AppError.notFound('Contact');
    await suppressErased(db, workspaceId, identities, transaction);
    return { suppressed: identities.length };
  });
}

/** Tags given by id must exist; tags given by name are created when missing (their natural key). */
export async function addContactTags({ db }: ContactDeps, workspaceId: string, contactId: string, tags: string[]) {
  const ids = [...new Set(tags.filter((tag) => UUID.test(tag)).map((tag) => tag.toLowerCase()))];
  // Names are one tag in any case; the first spelling given is the one a new tag is created with.
  const names = [...new Map(tags.filter((tag) => !UUID.test(tag)).reverse().map((name) => [name.toLowerCase(), name])).values()];
  const added = await db.transaction(async (transaction) => {
    if (!(await lockContact(db, workspaceId, contactId, transaction))) throw AppError.notFound('Contact');
    const known = new Set((await findTags(db, workspaceId, ids, transaction)).map((tag) => tag.id));
    const fieldErrors: Record<string, string[]> = {};
    tags.forEach((tag, index) => {
      if (UUID.test(tag) && !known.has(tag.toLowerCase())) fieldErrors[`tags[${index}]`] = ['No tag with this id in the workspace'];
    });
    if (Object.keys(fieldErrors).length) throw AppError.validation({ formErrors: [], fieldErrors });
    const named = await ensureTags(db, workspaceId, names, transaction);
    return tagContact(db, workspaceId, contactId, [...new Set([...ids, ...named.map((tag) => tag.id)])], transaction);
  });
  return { added, tags: await tagsOfContact(db, workspaceId, contactId) };
}

/** Removing is idempotent: tags the contact does not have (or that do not exist) remove nothing. */
export async function removeContactTags(deps: ContactDeps, workspaceId: string, contactId: string, tags: string[]) {
  const { db } = deps;
  await requireContact(deps, workspaceId, contactId);
  const current = await tagsOfContact(db, workspaceId, contactId);
  const wanted = new Set(tags.map((tag) => tag.toLowerCase()));
  const ids = current.filter((tag) => wanted.has(tag.id) || wanted.has(tag.name.toLowerCase())).map((tag) => tag.id);
  const removed = await untagContact(db, workspaceId, contactId, ids);
  return { removed, tags: await tagsOfContact(db, workspaceId, contactId) };
}

/** `audienceDb`: the pool of audience queries (db/audience-session.ts), where segment-filtered lists and exports run. */
export function createContactService(db: Sequelize, audienceDb: Sequelize = db) {
  const deps: ContactDeps = { db, audienceDb };
  return {
    upsert: (workspaceId: string, input: UpsertContactInput) => upsertContact(db, workspaceId, input),

    /** The CSV export and the per-contact (data-subject) export. */
    exports: createContactExports(db, audienceDb),

    list: (workspaceId: string, query: ContactListInput) => contactPage(deps, workspaceId, query),
    detail: (workspaceId: string, contactId: string) => contactDetail(deps, workspaceId, contactId),
    erase: (workspaceId: string, contactId: string) => eraseContact(deps, workspaceId, contactId),
    addTags: (workspaceId: string, contactId: string, tags: string[]) => addContactTags(deps, workspaceId, contactId, tags),
    removeTags: (workspaceId: string, contactId: string, tags: string[]) => removeContactTags(deps, workspaceId, contactId, tags),
    journey: async (workspaceId: string, contactId: string, page: JourneyPageInput) => {
      await requireContact(deps, workspaceId, contactId);
      return contactJourney(db, workspaceId, contactId, page);
    },
  };
}

export type ContactService = ReturnType<typeof createContactService>;
