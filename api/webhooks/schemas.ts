import { z } from 'zod';
import { HTTPS_URL_PATTERN, offset } from '../http/formats';
import { ALL_WEBHOOK_EVENTS, WEBHOOK_EVENTS } from '../../core/webhook-events';

const Url = z
  .string()
  .min(1)
  .max(2_048)
  .describe('https, resolving to public addresses only (checked with DNS when saved and again at every call: 422 when it does not)')
  .meta({ pattern: HTTPS_URL_PATTERN });

const Events = z
  .array(z.enum([...WEBHOOK_EVENTS, ALL_WEBHOOK_EVENTS]))
  .min(1)
  .max(WEBHOOK_EVENTS.length + 1)
  .refine((events) => !events.includes(ALL_WEBHOOK_EVENTS) || events.length === 1, `"${ALL_WEBHOOK_EVENTS}" stands alone: it subscribes to every event`)
  .transform((events) => [...new Set(events)])
  .describe(`Event names (docs/webhooks.md), or ["${ALL_WEBHOOK_EVENTS}"] for every event, including ones added later`)
  .meta({ if: { contains: { const: ALL_WEBHOOK_EVENTS } }, then: { maxItems: 1 } });

const Description = z.string().max(500).nullable();

export const CreateWebhookBody = z
  .object({
    url: Url,
    description: Description.optional(),
    events: Events,
    enabled: z.boolean().default(true),
  })
  .meta({ id: 'CreateWebhook' });

export const UpdateWebhookBody = z
  .object({
    url: Url.optional(),
    description: Description.optional(),
    events: Events.optional(),
    enabled: z.boolean().optional().describe('true again after the service disabled it (410, or 5 days of failures) starts its health afresh'),
  })
  .meta({ id: 'UpdateWebhook' });

export const WebhookParams = z.object({ id: z.uuid() });
export const WebhookDeliveryParams = z.object({ id: z.uuid(), deliveryId: z.uuid() });

const DeliveryStatus = z.enum(['pending', 'succeeded', 'failed']);

export const WebhookDeliveryListQuery = z.object({
  status: DeliveryStatus.optional(),
  limit: z.coerce.number().int().min(1).max(100).default(50),
  offset: offset(),
});

export const WebhookSchema = z
  .object({
    id: z.uuid(),
    url: z.string(),
    description: z.string().nullable(),
    events: z.array(z.string()),
    enabled: z.boolean(),
    createdAt: z.iso.datetime(),
  })
  .meta({ id: 'Webhook' });

export const WebhookListSchema = z.object({ webhooks: z.array(WebhookSchema) }).meta({ id: 'WebhookList' });
export const WebhookEnvelopeSchema = z.object({ webhook: WebhookSchema }).meta({ id: 'WebhookEnvelope' });
export const WebhookCreatedSchema = z
  .object({ webhook: WebhookSchema, secret: z.string().describe('whsec_…: shown only here; verify requests with it') })
  .meta({ id: 'WebhookCreated' });

export const WebhookAttemptSchema = z
  .object({
    attempt: z.int().describe('1 for the first; numbering goes on across manual retries'),
    status: DeliveryStatus.describe('pending: the request is out, or its answer was never recorded'),
    statusCode: z.int().nullable().describe('null when no answer came (timeout, refused connection, blocked address)'),
    durationMs: z.int().nullable(),
    error: z.string().nullable(),
    createdAt: z.iso.datetime(),
  })
  .meta({ id: 'WebhookAttempt' });

export const WebhookDeliverySchema = z
  .object({
    id: z.uuid().describe('Also the webhook-id header of every attempt'),
    event: z.string(),
    status: DeliveryStatus.describe('pending until an attempt succeeds or the last one fails'),
    statusCode: z.int().nullable().describe('The last attempt\'s answer'),
    createdAt: z.iso.datetime(),
    error: z.string().nullable().describe('Why the last attempt, or the delivery, failed'),
    nextAttemptAt: z.iso.datetime().nullable(),
    attempts: z.array(WebhookAttemptSchema),
  })
  .meta({ id: 'WebhookDelivery' });

export const WebhookDeliveryListSchema = z
  .object({ deliveries: z.array(WebhookDeliverySchema), total: z.int(), limit: z.int(), offset: z.int() })
  .meta({ id: 'WebhookDeliveryList' });

export const WebhookDeliveryEnvelopeSchema = z.object({ delivery: WebhookDeliverySchema }).meta({ id: 'WebhookDeliveryEnvelope' });

export type WebhookView = z.infer<typeof WebhookSchema>;
export type WebhookDeliveryView = z.infer<typeof WebhookDeliverySchema>;
