import type { Sequelize } from 'sequelize';
import { AppError, isAppError } from '../../core/errors';
import { isChatChannel, pickIdentity } from '../../core/message-channels';
import { requestHash } from '../../core/request-hash';
import { messageClickedLinks } from '../../db/repositories/link-stats';
import { identitiesOf } from '../../db/repositories/contact-identities';
import { defaultSender } from '../../db/repositories/journey-messages';
import { findAcceptedKey } from '../../db/repositories/message-acceptance';
import { listMessageEvents } from '../../db/repositories/message-events';
import { findFallbackMessageId } from '../../db/repositories/message-fallback';
import { type DroppedRecipient, findMessage } from '../../db/repositories/messages';
import { createChatAcceptance } from '../../services/acceptance/chat-acceptance';
import type { AcceptanceWriter } from '../../services/acceptance/write';
import type { EmailAcceptance } from '../../services/acceptance/email-acceptance';
import type { SendChecks, SendEmailInput } from '../../services/acceptance/email-draft';
import { planFallback } from '../../services/acceptance/fallback-plan';
import type { Sender, SendOutcome } from '../../services/acceptance/outcome';
import { messageStatusView } from '../http/message-views';
import type { SendMessageInput } from './schemas';
import { resolveTarget, type Target } from './target';

export interface MessageServiceDeps extends AcceptanceWriter {
  checks: SendChecks;
  /** Email's acceptance (POST /emails): email through /messages is the same send, not a copy of it. */
  emails: EmailAcceptance;
}

export type MessageOutcome = SendOutcome & { channel?: string };

function suppressedEverywhere(dropped: DroppedRecipient[]): AppError {
  const reasons = dropped.map((entry) => `${entry.address}: ${entry.reason}`).join(', ');
  return new AppError('suppressed', `The recipient is suppressed on every channel of the fallback chain (${reasons})`, { droppedRecipients: dropped });
}

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
    listUnsubscribe: input.listUnsubscribe,
  };
}

/**
 * The decided /messages body has no required `from`: an email without one goes from the workspace's default
 * sender, the same one a journey's email step falls back to (db/repositories/journey-messages.ts
 * `defaultSender`: the `defaultFromAddress` of the verified domain verified first, with its display name),
 * so one workspace never sends from two defaults. 422 on `from` when no verified domain has one. Only when
 * the email channel is on the send's way (first, or in its fallback chain).
 */
export async function withDefaultSender(db: Sequelize, workspaceId: string, input: SendMessageInput, target: Target): Promise<SendMessageInput> {
  const chainHasEmail = (input.fallbackChain ?? []).some((step) => (typeof step === 'string' ? step : step.channel) === 'email');
  if (input.from || (target.channel !== 'email' && !chainHasEmail)) return input;
  const sender = await defaultSender(db, workspaceId);
  if (!sender) {
    throw AppError.validation({
      formErrors: [],
      fieldErrors: { from: ['Required on the email channel: no verified domain has a default sender (PATCH /domains/:id defaultFromAddress)'] },
    });
  }
  // A bare address: the sender check adds the domain's default display name (core/sender-authorization.ts).
  return { ...input, from: sender.address };
}

const isSuppressed = (outcome: MessageOutcome): outcome is { status: 'failed'; error: AppError } =>
  outcome.status === 'failed' && outcome.error.code === 'suppressed';

function droppedOf(error: AppError): DroppedRecipient[] {
  const dropped = error.details.droppedRecipients;
  return Array.isArray(dropped) ? (dropped as DroppedRecipient[]) : [];
}

/** A send is one attempt on one channel; its fallback chain is the channels after it. */
interface Attempt {
  input: SendMessageInput;
  target: Target;
}

/**
 * The attempt on the chain's next channel when the recipient is suppressed on this one: the first step
 * becomes the channel (its `to`, else the contact's identity there: planFallback already checked there is
 * one), the rest stays its chain. Null at the end of the chain.
 */
async function nextOnChain(db: Sequelize, workspaceId: string, { input, target }: Attempt): Promise<Attempt | null> {
  const [step, ...rest] = (input.fallbackChain ?? []).map((entry) => (typeof entry === 'string' ? { channel: entry, to: undefined } : entry));
  if (!step) return null;
  const to = step.to ?? (target.contactId ? pickIdentity(await identitiesOf(db, workspaceId, [target.contactId]), step.channel)?.address : undefined);
  if (!to) return null;
  return {
    input: { ...input, channel: step.channel, to, fallbackChain: rest.length ? rest : undefined },
    target: { channel: step.channel, to, contactId: target.contactId },
  };
}

/**
 * POST /messages: the idempotency key first (a repeat answers 200 duplicate whatever else changed, as on
 * POST /emails), then the channel and address (given, or the contact's), the sender of an email (given, or
 * the default), then that channel's acceptance: email's own for email, the chat acceptance for WhatsApp and
 * Telegram. A recipient suppressed on a channel of a fallback chain is not a 409 while the chain goes on:
 * the next channel takes the send, and the 202 names the suppressed addresses in droppedRecipients. 409 only
 * when the recipient is suppressed on every channel of the chain.
 */
export function createMessageService({ db, checks, emails, wake }: MessageServiceDeps) {
  const { acceptChat, draftChat } = createChatAcceptance({ db, checks, wake });

  async function acceptOn(principal: Sender, { input, target }: Attempt, hash: string): Promise<MessageOutcome> {
    try {
      const fallback = await planFallback({ db, checks, draftChat, emailInputOf }, principal.workspaceId, input, target, hash);
      return isChatChannel(target.channel)
        ? await acceptChat(principal, target.channel, target, input, hash, { fallback })
        : await emails.sendWithHash(principal, emailInputOf(input, target.to), hash, { contactId: target.contactId, content: { fallback } });
    } catch (error) {
      // The chat acceptance throws its refusals; email's come back as outcomes. Suppression is read alike.
      if (isAppError(error) && error.code === 'suppressed') return { status: 'failed', error };
      throw error;
    }
  }

  return {
    async send(principal: Sender, given: SendMessageInput): Promise<MessageOutcome> {
      const hash = requestHash(given);
      const existing = await findAcceptedKey(db, principal.workspaceId, given.idempotencyKey);
      if (existing) return { status: 'duplicate', id: existing.id, bodyMismatch: existing.requestHash !== hash };
      const target = await resolveTarget(db, principal.workspaceId, given);
      let attempt: Attempt = { input: await withDefaultSender(db, principal.workspaceId, given, target), target };
      const skipped: DroppedRecipient[] = [];
      for (;;) {
        const outcome: MessageOutcome = await acceptOn(principal, attempt, hash);
        if (outcome.status === 'accepted') {
          return { ...outcome, channel: attempt.target.channel, droppedRecipients: [...skipped, ...outcome.droppedRecipients] };
        }
        if (!isSuppressed(outcome)) return outcome;
        const next: Attempt | null = await nextOnChain(db, principal.workspaceId, attempt);
        if (!next) return skipped.length ? { status: 'failed', error: suppressedEverywhere([...skipped, ...droppedOf(outcome.error)]) } : outcome;
        skipped.push(...droppedOf(outcome.error));
        attempt = next;
      }
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
