import type { z } from 'zod';
import type { SystemField } from '../../core/custom-fields';
import type { CustomFieldRecord } from '../../db/repositories/custom-fields';
import type { CustomFieldSchema } from './schemas';

export function customFieldView(field: CustomFieldRecord | SystemField): z.infer<typeof CustomFieldSchema> {
  return {
    id: field.id,
    key: field.key,
    label: field.label,
    type: field.type,
    options: field.options,
    groupName: field.groupName,
    isSystem: field.isSystem,
    archived: field.archived,
  };
}
