import type { Sequelize } from 'sequelize';
import { AppError } from '../../core/errors';
import { existingContactIds } from '../../db/repositories/contacts';
import { addListMembers, deleteList, findList, listLists, removeListMembers, upsertList } from '../../db/repositories/lists';

export function createListService(db: Sequelize) {
  async function requireList(workspaceId: string, listId: string) {
    const list = await findList(db, workspaceId, listId);
    if (!list) throw AppError.notFound('List');
    return list;
  }

  return {
    list: (workspaceId: string) => listLists(db, workspaceId),

    create: (workspaceId: string, name: string) => upsertList(db, workspaceId, name),

    async remove(workspaceId: string, listId: string): Promise<void> {
      if (!(await deleteList(db, workspaceId, listId))) throw AppError.notFound('List');
    },

    /**
     * Every id must be a contact of the workspace, or nothing is added (422 naming the unknown ones);
     * members already there are skipped, so the call is idempotent.
     */
    async addMembers(workspaceId: string, listId: string, contactIds: string[]): Promise<number> {
      await requireList(workspaceId, listId);
      const known = await existingContactIds(db, workspaceId, contactIds);
      const fieldErrors: Record<string, string[]> = {};
      contactIds.forEach((id, index) => {
        if (!known.has(id.toLowerCase())) fieldErrors[`contactIds[${index}]`] = ['No contact with this id in the workspace'];
      });
      if (Object.keys(fieldErrors).length) throw AppError.validation({ formErrors: [], fieldErrors });
      return addListMembers(db, workspaceId, listId, contactIds);
    },

    async removeMembers(workspaceId: string, listId: string, contactIds: string[]): Promise<number> {
      await requireList(workspaceId, listId);
      return removeListMembers(db, workspaceId, listId, contactIds);
    },
  };
}

export type ListService = ReturnType<typeof createListService>;
