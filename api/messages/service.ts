import type { Sequelize } from 'sequelize';
import { AppError } from '../../core/errors';
import { isChatChannel } from '../../core/message-channels';
import { requestHash } from '../../core/request-hash';
import { messageClickedLinks } from '../../db/repositories/link-stats';
import { findAcceptedKey } from '../../db/repositories/message-acceptance';
import { listMessageEvents } from '../../db/repositories/message-events';
import { findFallbackMessageId } from '../../db/repositories/message-fallback';
import { findMessage } from '../../db/repositories/messages';
import { createChatAcceptance } from '../../services/acceptance/chat-acceptance';
import type { EmailAcceptance } from '../../services/acceptance/email-acceptance';
import type { SendChecks, SendEmailInput } from '../../services/acceptance/email-draft';
import { planFallback } from '../../services/acceptance/fallback-plan';
import type { Sender, SendOutcome } from '../../services/acceptance/outcome';
import { messageStatusView } from '../http/message-views';
import type { SendMessageInput } from './schemas';
import { resolveTarget } from './target';

export interface MessageServiceDeps {
  db: Sequelize;
  checks: SendChecks;
  /** Email's acceptance (POST /emails): email through /messages is the same send, not a copy of it. */
  emails: EmailAcceptance;
}

export type MessageOutcome = SendOutcome & { channel?: string };

/**
 * The /messages body as the POST /emails input it stands for, once its address is known. WhatsApp's
 * contentSid and the fallback chain are not email's to read (a chain may go on to WhatsApp).
 */
export function emailInputOf(input: SendMessageInput, to: string): SendEmailInput {
  if (!input.from) throw AppError.validation({ formErrors: [], fieldErrors: { from: ['Required on the email channel'] } });
  if (input.html === undefined && input.text === undefined && input.templateId === undefined) {
    throw AppError.validation({ formErrors: [], fieldErrors: { html: ['Give html, text or templateId'] } });
  }
  if (input.subject === undefined && input.templateId === undefined) {
    throw AppError.validation({ formErrors: [], fieldErrors: { subject: ['Required unless the template supplies it'] } });
  }
  return {
    to,
    from: input.from,
    subject: input.subject,
    html: input.html,
    text: input.text,
    templateId: input.templateId,
    variables: input.variables,
    attachments: input.attachments,
    idempotencyKey: input.idempotencyKey,
    disableTracking: input.disableTracking,
    disableUtm: input.disableUtm,
  };
}

/**
 * POST /messages: the idempotency key first (a repeat answers 200 duplicate whatever else changed, as on
 * POST /emails), then the channel and address (given, or the contact's), then that channel's acceptance:
 * email's own for email, the chat acceptance for WhatsApp and Telegram.
 */
export function createMessageService({ db, checks, emails }: MessageServiceDeps) {
  const { acceptChat, draftChat } = createChatAcceptance({ db, checks });
  return {
    async send(principal: Sender, input: SendMessageInput): Promise<MessageOutcome> {
      const hash = requestHash(input);
      const existing = await findAcceptedKey(db, principal.workspaceId, input.idempotencyKey);
      if (existing) return { status: 'duplicate', id: existing.id, bodyMismatch: existing.requestHash !== hash };
      const target = await resolveTarget(db, principal.workspaceId, input);
      const fallback = await planFallback({ db, checks, draftChat, emailInputOf }, principal.workspaceId, input, target, hash);
      const outcome = isChatChannel(target.channel)
        ? await acceptChat(principal, target.channel, target, input, hash, { fallback })
        : await emails.sendWithHash(principal, emailInputOf(input, target.to), hash, { contactId: target.contactId, content: { fallback } });
      return outcome.status === 'accepted' ? { ...outcome, channel: target.channel } : outcome;
    },

    /** GET /messages/:id: the MessageStatus of a message of any channel, with the links of a fallback. */
    async status(workspaceId: string, id: string) {
      const message = await findMessage(db, workspaceId, id);
      if (!message) throw AppError.notFound('Message');
      const [events, clicked, fallbackMessageId] = await Promise.all([
        listMessageEvents(db, workspaceId, message.id),
        messageClickedLinks(db, workspaceId, message.id),
        findFallbackMessageId(db, workspaceId, message.id),
      ]);
      const fallbackOf = typeof message.content.fallbackOf === 'string' ? message.content.fallbackOf : null;
      return { ...messageStatusView(message, events, clicked), fallbackOf, fallbackMessageId };
    },
  };
}

export type MessageService = ReturnType<typeof createMessageService>;
