import type { z } from 'zod';
import type { ApiKeyRecord } from '../../db/repositories/api-keys';
import type { ApiKeyCreatedSchema, ApiKeySchema } from './schemas';

export function apiKeyView(key: ApiKeyRecord): z.infer<typeof ApiKeySchema> {
  return {
    id: key.id,
    name: key.name,
    prefix: key.displayPrefix,
    scopes: key.scopes,
    createdAt: key.createdAt.toISOString(),
  };
}

export function apiKeyCreatedView(key: ApiKeyRecord, secret: string): z.infer<typeof ApiKeyCreatedSchema> {
  return { ...apiKeyView(key), apiKey: secret };
}
