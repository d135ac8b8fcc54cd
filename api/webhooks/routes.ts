import { created, ok, type RouteTable } from '../http/route';
import {
  CreateWebhookBody,
  UpdateWebhookBody,
  WebhookCreatedSchema,
  WebhookDeliveryEnvelopeSchema,
  WebhookDeliveryListQuery,
  WebhookDeliveryListSchema,
  WebhookDeliveryParams,
  WebhookEnvelopeSchema,
  WebhookListSchema,
  WebhookParams,
} from './schemas';
import type { WebhookService } from './service';
import { webhookDeliveryView, webhookView } from './views';

export function webhookRoutes(routes: RouteTable, webhooks: WebhookService): void {
  const notFound = { description: 'No such webhook in this workspace' };

  routes.get('/webhooks', 'webhooks:read', {
    summary: 'List the workspace\'s webhooks, newest first',
    responses: { 200: { description: 'Webhooks (their secrets are never shown again)', schema: WebhookListSchema } },
    handle: async ({ principal }) => ok({ webhooks: (await webhooks.list(principal.workspaceId)).map(webhookView) }),
  });

  routes.post('/webhooks', 'webhooks:write', {
    summary: 'Add a webhook; answers its signing secret, once',
    body: CreateWebhookBody,
    responses: {
      201: { description: 'Created, with the secret that signs its requests (shown only here)', schema: WebhookCreatedSchema },
      409: { description: 'The workspace already has the most webhooks allowed (20)' },
      422: { description: 'Invalid input, or a URL that is not https or resolves to a private address' },
    },
    handle: async ({ principal, body }) => {
      const { webhook, secret } = await webhooks.create(principal.workspaceId, body);
      return created({ webhook: webhookView(webhook), secret });
    },
  });

  routes.get('/webhooks/:id', 'webhooks:read', {
    summary: 'A webhook',
    params: WebhookParams,
    responses: { 200: { description: 'The webhook', schema: WebhookEnvelopeSchema }, 404: notFound },
    handle: async ({ principal, params }) => ok({ webhook: webhookView(await webhooks.get(principal.workspaceId, params.id)) }),
  });

  routes.patch('/webhooks/:id', 'webhooks:write', {
    summary: 'Change a webhook\'s URL, description, events, or enable and disable it; absent fields stay',
    params: WebhookParams,
    body: UpdateWebhookBody,
    responses: {
      200: { description: 'The webhook as it now is', schema: WebhookEnvelopeSchema },
      404: notFound,
      422: { description: 'Invalid input, or a URL that is not https or resolves to a private address' },
    },
    handle: async ({ principal, params, body }) => ok({ webhook: webhookView(await webhooks.update(principal.workspaceId, params.id, body)) }),
  });

  routes.delete('/webhooks/:id', 'webhooks:write', {
    summary: 'Delete a webhook with its delivery log; nothing more is sent to it',
    params: WebhookParams,
    responses: { 200: { description: 'The deleted webhook', schema: WebhookEnvelopeSchema }, 404: notFound },
    handle: async ({ principal, params }) => ok({ webhook: webhookView(await webhooks.remove(principal.workspaceId, params.id)) }),
  });

  routes.post('/webhooks/:id/rotate-secret', 'webhooks:write', {
    summary: 'Issue a new signing secret, answered once; the old one also signs for 24 hours',
    params: WebhookParams,
    responses: { 200: { description: 'The webhook and its new secret', schema: WebhookCreatedSchema }, 404: notFound },
    handle: async ({ principal, params }) => {
      const { webhook, secret } = await webhooks.rotateSecret(principal.workspaceId, params.id);
      return ok({ webhook: webhookView(webhook), secret });
    },
  });

  routes.get('/webhooks/:id/deliveries', 'webhooks:read', {
    summary: 'The webhook\'s deliveries, newest first, each with its attempts',
    params: WebhookParams,
    query: WebhookDeliveryListQuery,
    responses: { 200: { description: 'One page', schema: WebhookDeliveryListSchema }, 404: notFound },
    handle: async ({ principal, params, query }) => {
      const { rows, total } = await webhooks.deliveries(principal.workspaceId, params.id, query);
      return ok({ deliveries: rows.map(webhookDeliveryView), total, limit: query.limit, offset: query.offset });
    },
  });

  routes.post('/webhooks/:id/deliveries/:deliveryId/retry', 'webhooks:write', {
    summary: 'Send a finished delivery again (same body and webhook-id), on a fresh retry schedule',
    params: WebhookDeliveryParams,
    responses: {
      202: { description: 'Queued; its attempts follow in the log', schema: WebhookDeliveryEnvelopeSchema },
      404: { description: 'No such webhook or delivery' },
      409: { description: 'The delivery is still being attempted, or the webhook is disabled' },
    },
    handle: async ({ principal, params }) => ({
      status: 202,
      body: { delivery: webhookDeliveryView(await webhooks.retry(principal.workspaceId, params.id, params.deliveryId)) },
    }),
  });
}
