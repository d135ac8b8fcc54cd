import { z } from 'zod';
import { text } from '../http/formats';
import { QuotaExceededSchema } from '../http/openapi';
import { FULL_ACCESS, SCOPES } from '../../core/scopes';

export const GrantSchema = z.enum([...SCOPES, FULL_ACCESS]).meta({ id: 'Scope', description: '`*` is full access' });

export const CreateApiKeyBody = z
  .object({
    name: text(100).optional(),
    scopes: z.array(GrantSchema).min(1).optional().describe('Defaults to ["*"], full access'),
  })
  .meta({ id: 'CreateApiKey' });

export const ApiKeyParams = z.object({ id: z.uuid() });

export const ApiKeySchema = z
  .object({
    id: z.uuid(),
    name: z.string().nullable(),
    prefix: z.string().describe('The first characters of the key, to recognise it'),
    scopes: z.array(GrantSchema),
    createdAt: z.iso.datetime(),
  })
  .meta({ id: 'ApiKey' });

export const ApiKeyCreatedSchema = ApiKeySchema.extend({
  apiKey: z.string().describe('The full key. Shown only in this response.'),
}).meta({ id: 'ApiKeyCreated' });

export const ApiKeyListSchema = z.object({ data: z.array(ApiKeySchema) }).meta({ id: 'ApiKeyList' });

export const ApiKeyDeletedSchema = z.object({ deleted: z.literal(true), id: z.uuid() }).meta({ id: 'ApiKeyDeleted' });

export const ApiKeyQuotaExceededSchema = QuotaExceededSchema.extend({
  resource: z.literal('api_keys').describe('What the cap counts: the workspace\'s active API keys'),
  limit: z.number().int().describe('Active keys a workspace may hold'),
  used: z.number().int().describe('Active keys it holds now'),
  remaining: z.number().int().describe('Always 0 in this answer'),
}).meta({ id: 'ApiKeyQuotaExceeded' });

export type CreateApiKeyInput = z.infer<typeof CreateApiKeyBody>;
