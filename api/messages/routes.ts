import { MessageStatusSchema } from '../http/message-schemas';
import { QUOTA_EXCEEDED_RESPONSE } from '../http/openapi';
import { ok, type Reply, type RouteTable } from '../http/route';
import { MessageAcceptedSchema, MessageParams, SendMessageBody } from './schemas';
import type { MessageOutcome, MessageService } from './service';

function reply(outcome: MessageOutcome, idempotencyKey: string): Reply {
  switch (outcome.status) {
    case 'accepted':
      return { status: 202, body: { id: outcome.id, status: 'queued', channel: outcome.channel, idempotencyKey, droppedRecipients: outcome.droppedRecipients } };
    case 'duplicate':
      return ok({ status: 'duplicate', idempotencyKey, id: outcome.id, ...(outcome.bodyMismatch && { bodyMismatch: true }) });
    case 'failed':
      throw outcome.error;
  }
}

export function messageRoutes(routes: RouteTable, messages: MessageService): void {
  routes.post('/messages', 'messages:send', {
    summary: 'Send a message over email, WhatsApp or Telegram (accepted, then sent by a durable workflow)',
    body: SendMessageBody,
    bodyLimit: 'large',
    responses: {
      202: { description: 'Accepted and queued on its channel', schema: MessageAcceptedSchema },
      200: { description: 'This idempotencyKey was already accepted: the first id', schema: MessageAcceptedSchema },
      402: QUOTA_EXCEEDED_RESPONSE,
      403: { description: 'domain_not_verified (email)' },
      404: { description: 'No such contact' },
      409: { description: 'suppressed: the recipient is suppressed on the channel (with a fallbackChain: on every channel of it)' },
    },
    handle: async ({ principal, body }) => reply(await messages.send(principal, body), body.idempotencyKey),
  });

  routes.get('/messages/:id', 'messages:send', {
    summary: 'Status, metadata, attachments and the events timeline of a message of any channel',
    params: MessageParams,
    responses: { 200: { description: 'The message', schema: MessageStatusSchema }, 404: { description: 'No such message' } },
    handle: async ({ principal, params }) => ok(await messages.status(principal.workspaceId, params.id)),
  });
}
