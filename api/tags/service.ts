import type { Sequelize } from 'sequelize';
import { AppError } from '../../core/errors';
import { deleteTag, listTags, upsertTag } from '../../db/repositories/tags';

export function createTagService(db: Sequelize) {
  return {
    list: (workspaceId: string) => listTags(db, workspaceId),

    create: (workspaceId: string, input: { name: string; color?: string | null }) =>
      upsertTag(db, workspaceId, { name: input.name, color: input.color ?? null }),

    /** The tag leaves every contact with it. Segments that name it then match nobody on that condition. */
    async remove(workspaceId: string, tagId: string): Promise<void> {
      if (!(await deleteTag(db, workspaceId, tagId))) throw AppError.notFound('Tag');
    },
  };
}

export type TagService = ReturnType<typeof createTagService>;
