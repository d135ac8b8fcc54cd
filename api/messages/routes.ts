import type { Sequelize } from 'sequelize';
import { AppError } from '../../core/errors';
import { messageClickedLinks } from '../../db/repositories/link-stats';
import { listMessageEvents } from '../../db/repositories/message-events';
import { findFallbackMessageId } from '../../db/repositories/message-fallback';
import { findMessage } from '../../db/repositories/messages';
import { MessageStatusSchema } from '../emails/schemas';
import { messageStatusView } from '../emails/views';
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

export function messageRoutes(routes: RouteTable, messages: MessageService, db: Sequelize): void {
  routes.post('/messages', 'messages:send', {
    summary: 'Send a message over email, WhatsApp or Telegram (accepted, then sent by a durable workflow)',
    body: SendMessageBody,
    bodyLimit: 'large',
    responses: {
      202: { description: 'Accepted and queued on its channel', schema: MessageAcceptedSchema },
      200: { description: 'This idempotencyKey was already accepted: the first id', schema: MessageAcceptedSchema },
      402: { description: 'Monthly plan quota exhausted' },
      403: { description: 'domain_not_verified (email)' },
      404: { description: 'No such contact' },
      409: { description: 'suppressed: the recipient is suppressed on the channel' },
    },
    handle: async ({ principal, body }) => reply(await messages.send(principal, body), body.idempotencyKey),
  });

  routes.get('/messages/:id', 'messages:send', {
    summary: 'Status, metadata, attachments and the events timeline of a message of any channel',
    params: MessageParams,
    responses: { 200: { description: 'The message', schema: MessageStatusSchema }, 404: { description: 'No such message' } },
    handle: async ({ principal, params }) => {
      const message = await findMessage(db, principal.workspaceId, params.id);
      if (!message) throw AppError.notFound('Message');
      const [events, clicked, fallbackMessageId] = await Promise.all([
        listMessageEvents(db, principal.workspaceId, message.id),
        messageClickedLinks(db, principal.workspaceId, message.id),
        findFallbackMessageId(db, principal.workspaceId, message.id),
      ]);
      const fallbackOf = typeof message.content.fallbackOf === 'string' ? message.content.fallbackOf : null;
      return ok({ ...messageStatusView(message, events, clicked), fallbackOf, fallbackMessageId });
    },
  });
}
