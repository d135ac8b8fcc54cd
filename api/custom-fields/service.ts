import type { Sequelize } from 'sequelize';
import { SYSTEM_FIELDS } from '../../core/custom-fields';
import { AppError } from '../../core/errors';
import {
  findCustomField,
  findCustomFieldByKey,
  insertCustomField,
  listCustomFields,
  updateCustomField,
} from '../../db/repositories/custom-fields';
import type { CreateCustomFieldInput, UpdateCustomFieldInput } from './schemas';

const systemKey = (key: string) => SYSTEM_FIELDS.find((field) => field.key.toLowerCase() === key.toLowerCase());

export function createCustomFieldService(db: Sequelize) {
  return {
    /** System fields first, then the workspace's own, newest first. */
    async list(workspaceId: string) {
      return [...SYSTEM_FIELDS, ...(await listCustomFields(db, workspaceId))];
    },

    /** A key is taken once per workspace, in any case: a second field of that key answers 409 with the first's id. */
    async create(workspaceId: string, input: CreateCustomFieldInput) {
      const system = systemKey(input.key);
      if (system) throw new AppError('conflict', `${system.key} is a system field`, { id: system.id });
      const field = await insertCustomField(db, workspaceId, {
        key: input.key,
        label: input.label,
        type: input.type,
        options: input.options ?? null,
        groupName: input.groupName ?? null,
      });
      if (field) return field;
      const existing = await findCustomFieldByKey(db, workspaceId, input.key);
      throw new AppError('conflict', `The workspace already has a custom field with key ${existing?.key ?? input.key}`, { id: existing?.id });
    },

    /** Label, options, group and archived can change; key and type never do (values and rules depend on them). */
    async update(workspaceId: string, fieldId: string, change: UpdateCustomFieldInput) {
      if (fieldId.startsWith('system:')) {
        if (!SYSTEM_FIELDS.some((field) => field.id === fieldId)) throw AppError.notFound('Custom field');
        throw new AppError('conflict', 'System fields cannot be changed');
      }
      const field = await findCustomField(db, workspaceId, fieldId);
      if (!field) throw AppError.notFound('Custom field');
      if (change.options && field.type !== 'select' && field.type !== 'multiselect') {
        throw AppError.validation({ formErrors: [], fieldErrors: { options: [`A ${field.type} field has no options`] } });
      }
      const updated = await updateCustomField(db, workspaceId, fieldId, change);
      if (!updated) throw AppError.notFound('Custom field');
      return updated;
    },
  };
}

export type CustomFieldService = ReturnType<typeof createCustomFieldService>;
