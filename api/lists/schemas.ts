import { z } from 'zod';
import { text } from '../http/formats';

export const CreateListBody = z
  .object({ name: text(100).describe('Unique in the workspace, case-insensitively') })
  .meta({ id: 'CreateList' });

export const ListSchema = z
  .object({ id: z.uuid(), name: z.string(), createdAt: z.iso.datetime(), contacts: z.int().describe('Members of the list') })
  .meta({ id: 'List' });

export const ListListSchema = z.object({ data: z.array(ListSchema) }).meta({ id: 'ListList' });

export const ListParams = z.object({ id: z.uuid() });

export const ListMembersBody = z
  .object({ contactIds: z.array(z.uuid()).min(1).max(1_000).describe('Contacts of this workspace (422 naming each id that is not)') })
  .meta({ id: 'ListMembers' });

export const ListMembersAddedSchema = z
  .object({ added: z.int().describe('Contacts that were not members before; a repeat adds 0') })
  .meta({ id: 'ListMembersAdded' });

export const ListMembersRemovedSchema = z
  .object({ removed: z.int().describe('Contacts that were members; a repeat removes 0') })
  .meta({ id: 'ListMembersRemoved' });

export const ListDeletedSchema = z.object({ deleted: z.literal(true), id: z.uuid() }).meta({ id: 'ListDeleted' });
