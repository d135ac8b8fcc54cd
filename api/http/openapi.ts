import { OpenAPIRegistry, OpenApiGeneratorV31 } from '@asteasolutions/zod-to-openapi';
import { z } from 'zod';

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

export function createOpenApiRegistry(): OpenAPIRegistry {
  const registry = new OpenAPIRegistry();
  registry.registerComponent('securitySchemes', 'bearerAuth', {
    type: 'http',
    scheme: 'bearer',
    description: 'A workspace API key: `Authorization: Bearer sk_...`',
  });
  return registry;
}

export function generateOpenApiDocument(registry: OpenAPIRegistry, serverUrl: string): object {
  return new OpenApiGeneratorV31(registry.definitions).generateDocument({
    openapi: '3.1.0',
    info: {
      title: 'Messaging API',
      version: '1.0.0',
      description:
        'Multi-tenant messaging: transactional email, campaigns and journeys over email, WhatsApp and Telegram. ' +
        'Every request carries a workspace API key; the workspace is always derived from the key. ' +
        'Each key may make 10 requests per second (RateLimit-* headers on every response).',
    },
    servers: [{ url: serverUrl }],
  });
}
