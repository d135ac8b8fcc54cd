import { z } from 'zod';
import { text } from '../http/formats';

export const CreateTagBody = z
  .object({
    name: text(100).describe('Unique in the workspace, case-insensitively'),
    color: z
      .string()
      .regex(/^#[0-9a-fA-F]{6}$/, 'Expected a color like #1a2b3c')
      .nullable()
      .optional()
      .describe('Used only on creation; a repeat leaves the existing tag as it is'),
  })
  .meta({ id: 'CreateTag' });

export const TagSchema = z
  .object({
    id: z.uuid(),
    name: z.string(),
    color: z.string().nullable(),
    createdAt: z.iso.datetime(),
    contacts: z.int().describe('Contacts with the tag'),
  })
  .meta({ id: 'Tag' });

export const TagListSchema = z.object({ data: z.array(TagSchema) }).meta({ id: 'TagList' });

export const TagParams = z.object({ id: z.uuid() });

export const TagDeletedSchema = z.object({ deleted: z.literal(true), id: z.uuid() }).meta({ id: 'TagDeleted' });
