import type { z } from 'zod';
import type { TagRecord } from '../../db/repositories/tags';
import type { TagSchema } from './schemas';

export function tagView(tag: TagRecord): z.infer<typeof TagSchema> {
  return { id: tag.id, name: tag.name, color: tag.color, createdAt: tag.createdAt.toISOString(), contacts: tag.contactCount };
}
