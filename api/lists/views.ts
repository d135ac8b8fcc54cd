import type { z } from 'zod';
import type { ListRecord } from '../../db/repositories/lists';
import type { ListSchema } from './schemas';

export function listView(list: ListRecord): z.infer<typeof ListSchema> {
  return { id: list.id, name: list.name, createdAt: list.createdAt.toISOString(), contacts: list.contactCount };
}
