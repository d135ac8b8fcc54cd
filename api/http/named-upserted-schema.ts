import { z } from 'zod';

/** The answer of creating a tag or a list by name: both resources answer it, so it lives with neither. */
export const NamedUpsertedSchema = z
  .object({ id: z.uuid(), name: z.string().describe('As first created'), created: z.boolean() })
  .meta({ id: 'NamedUpserted', description: 'A tag or list: created (201), or the existing one with that name in any case (200)' });
