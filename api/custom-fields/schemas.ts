import { z } from 'zod';
import { text } from '../http/formats';
import { FIELD_KEY, FIELD_TYPES } from '../../core/custom-fields';

const Options = z
  .array(text(100))
  .min(1)
  .max(200)
  .refine((options) => new Set(options).size === options.length, 'Options must be unique')
  // Unique as written; two that differ only in surrounding spaces are one option once trimmed (said in the description).
  .meta({ uniqueItems: true });

export const CreateCustomFieldBody = z
  .object({
    key: z
      .string()
      .regex(FIELD_KEY, 'A letter, then letters, digits or _ (at most 64)')
      .describe('The attribute key it types; unique in the workspace, case-insensitively'),
    label: text(200),
    type: z.enum(FIELD_TYPES).describe('date values are stored as UTC ISO 8601 date-times'),
    options: Options.optional().describe('Required for select and multiselect, refused otherwise'),
    groupName: text(100).nullable().optional(),
  })
  .superRefine((field, ctx) => {
    const choices = field.type === 'select' || field.type === 'multiselect';
    if (choices && !field.options) ctx.addIssue({ code: 'custom', path: ['options'], message: `A ${field.type} field needs options` });
    if (!choices && field.options) ctx.addIssue({ code: 'custom', path: ['options'], message: `A ${field.type} field has no options` });
  })
  .meta({
    id: 'CreateCustomField',
    if: { properties: { type: { enum: ['select', 'multiselect'] } } },
    then: { required: ['options'] },
    else: { not: { required: ['options'] } },
  });

export const UpdateCustomFieldBody = z
  .object({
    label: text(200).optional(),
    options: Options.optional().describe('select and multiselect fields only (422 for the others: the stored type is not in the request); values already stored are kept'),
    groupName: text(100).nullable().optional(),
    archived: z.boolean().optional().describe('Archived fields stay on contacts and in segments, but new values are ignored with a warning'),
  })
  .meta({ id: 'UpdateCustomField' });

export const CustomFieldSchema = z
  .object({
    id: z.string().describe('A uuid; system fields have ids like system:firstName'),
    key: z.string(),
    label: z.string(),
    type: z.enum(FIELD_TYPES),
    options: z.array(z.string()).nullable(),
    groupName: z.string().nullable(),
    isSystem: z.boolean().describe('Defined by the service for every workspace; read-only'),
    archived: z.boolean(),
  })
  .meta({ id: 'CustomField' });

export const CustomFieldListSchema = z.object({ data: z.array(CustomFieldSchema) }).meta({ id: 'CustomFieldList' });

export const CustomFieldParams = z.object({ id: z.union([z.uuid(), z.string().regex(/^system:[A-Za-z]\w*$/)]) });

export type CreateCustomFieldInput = z.infer<typeof CreateCustomFieldBody>;
export type UpdateCustomFieldInput = z.infer<typeof UpdateCustomFieldBody>;
