import type { Sequelize } from 'sequelize';
import { AppError } from '../../core/errors';
import type { Channel } from '../../core/identities';
import { isChatChannel, pickIdentity } from '../../core/message-channels';
import type { FallbackStep } from '../../core/message-content';
import { identitiesOf } from '../../db/repositories/contact-identities';
import type { ChatSendInput, createChatAcceptance } from './chat-acceptance';
import { draftSend, messageOf, type SendChecks, type SendEmailInput } from './email-draft';

type DraftChat = ReturnType<typeof createChatAcceptance>['draftChat'];

function chainError(message: string): AppError {
  return AppError.validation({ formErrors: [], fieldErrors: { fallbackChain: [message] } });
}

/** A send with a fallback chain: each step a channel, or a channel and its address. */
export interface FallbackInput extends ChatSendInput {
  fallbackChain?: ReadonlyArray<Channel | { channel: Channel; to?: string }>;
}

/** The first channel of the send and its contact (api/messages/target.ts resolves them). */
export interface FirstTarget {
  channel: Channel;
  contactId: string | null;
}

export interface FallbackPlanDeps<I extends FallbackInput> {
  db: Sequelize;
  checks: SendChecks;
  draftChat: DraftChat;
  /** The /messages body as POST /emails' input for an address (api/messages/service.ts). */
  emailInputOf: (input: I, to: string) => SendEmailInput;
}

/**
 * The steps of a fallback chain, each checked now as its channel's acceptance would check it (a sender on
 * a verified domain for email, the integration and the recipient for chat channels; WhatsApp's 24-hour
 * window is left to send time, when the customer may have written), and made into the row it becomes if
 * the step before it fails (core/message-content.ts, FallbackStep). Attachments are not stored again: the
 * fallback carries the first message's files. A step's address is its `to`, else the contact's primary
 * verified identity with consent on that channel.
 */
export async function planFallback<I extends FallbackInput>(deps: FallbackPlanDeps<I>, workspaceId: string, input: I, first: FirstTarget, hash: string): Promise<FallbackStep[]> {
  const chain = (input.fallbackChain ?? []).map((step) => (typeof step === 'string' ? { channel: step, to: undefined } : step));
  const seen = new Set<Channel>([first.channel]);
  const identities = first.contactId && chain.some((step) => !step.to) ? await identitiesOf(deps.db, workspaceId, [first.contactId]) : [];
  const steps: FallbackStep[] = [];
  for (const step of chain) {
    if (seen.has(step.channel)) throw chainError(`${step.channel} appears twice (the first channel counts)`);
    seen.add(step.channel);
    const to = step.to ?? pickIdentity(identities, step.channel)?.address;
    if (!to) throw chainError(`No address for ${step.channel}: give its to, or a contactId with a primary verified identity on it`);
    const withoutFiles = { ...input, attachments: undefined };
    if (isChatChannel(step.channel)) {
      const draft = await deps.draftChat(workspaceId, step.channel, to, withoutFiles, { window: false });
      steps.push({ channel: step.channel, to: [draft.to], fromAddress: null, subject: null, templateId: draft.template?.id ?? null, content: draft.stored });
    } else {
      const draft = await draftSend(deps.checks, workspaceId, deps.emailInputOf(withoutFiles, to), hash);
      const { message } = messageOf(draft, 'not-a-row', new Map(), 'not-a-row');
      steps.push({ channel: 'email', to: message.to, fromAddress: message.fromAddress, subject: message.subject, templateId: message.templateId, content: message.content });
    }
  }
  return steps;
}
