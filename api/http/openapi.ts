import { OpenAPIRegistry, OpenApiGeneratorV31 } from '@asteasolutions/zod-to-openapi';
import { z } from 'zod';
import { UUID_PATTERN } from './formats';

/** Shapes shared by every route's error responses. */
export const ErrorSchema = z
  .object({ error: z.string().describe('snake_case error code'), message: z.string().optional() })
  .loose()
  .meta({ id: 'Error' });

export const ValidationErrorSchema = z
  .object({
    error: z.object({ formErrors: z.array(z.string()), fieldErrors: z.record(z.string(), z.array(z.string())) }),
  })
  .meta({ id: 'ValidationError' });

/** The body of a send the plan's monthly quota refuses (402), with the period's figures now. */
export const QuotaExceededSchema = z
  .object({
    error: z.literal('quota_exceeded'),
    message: z.string(),
    resource: z.literal('messages').describe('What the quota counts: messages, one per recipient'),
    limit: z.number().int().describe('Messages the plan includes each month'),
    used: z.number().int().describe('Messages counted this month so far'),
    remaining: z.number().int().describe('limit - used, never below 0'),
    plan: z.string(),
  })
  .meta({ id: 'QuotaExceeded' });

export const QUOTA_EXCEEDED_RESPONSE = { description: 'quota_exceeded: the plan\'s monthly quota does not cover this send', schema: QuotaExceededSchema };

/** A 422: the field-by-field shape, or a route's own code (template_not_found, too_many_recipients...). */
export const InputErrorSchema = z.union([ValidationErrorSchema, ErrorSchema]);

export function createOpenApiRegistry(): OpenAPIRegistry {
  const registry = new OpenAPIRegistry();
  registry.registerComponent('securitySchemes', 'bearerAuth', {
    type: 'http',
    scheme: 'bearer',
    description:
      'A workspace API key: `Authorization: Bearer sk_...`. Each operation names its scope (`x-scopes`, any one of them ' +
      'suffices); a `:write` scope also grants its `:read`. Where the spec\'s table writes a `:write` scope on a read ' +
      '(GET /tags, /lists, /segments, /custom-fields, /campaigns), that scope is kept and the `:read` one is accepted too.',
  });
  return registry;
}

/**
 * zod's z.uuid() is stricter than JSON Schema's `format: uuid` (a version digit and the variant bits), and
 * some tools do not check formats at all: every uuid the document declares carries zod's rule as a pattern.
 */
function withUuidPatterns(node: unknown): void {
  if (Array.isArray(node)) {
    node.forEach(withUuidPatterns);
    return;
  }
  if (node === null || typeof node !== 'object') return;
  const schema = node as Record<string, unknown>;
  if (schema.format === 'uuid' && schema.pattern === undefined) schema.pattern = UUID_PATTERN;
  Object.values(schema).forEach(withUuidPatterns);
}

export function generateOpenApiDocument(registry: OpenAPIRegistry, serverUrl: string): object {
  const document = new OpenApiGeneratorV31(registry.definitions).generateDocument({
    openapi: '3.1.0',
    info: {
      title: 'Messaging API',
      version: '1.0.0',
      description:
        'Multi-tenant messaging: transactional email, campaigns and journeys over email, WhatsApp and Telegram. ' +
        'Every request carries a workspace API key; the workspace is always derived from the key. ' +
        'Each key may make 10 requests per second (RateLimit-* headers on every response). ' +
        'No string may hold a NUL character (U+0000) or an unpaired UTF-16 surrogate, in a body, a key or a query ' +
        'parameter: every route refuses them at the edge with 422, naming the field (PostgreSQL cannot store NUL, and a ' +
        'lone surrogate is not text). JSON Schema has no way to say "no unpaired surrogate", so it is said here.',
    },
    servers: [{ url: serverUrl }],
  });
  withUuidPatterns(document);
  return document;
}
