import type { Sequelize } from 'sequelize';
import { telegramContentOf } from '../core/message-content';
import type { AttachmentRef } from '../core/attachments';
import { findSentParts, recordSentPart } from '../db/repositories/message-parts';
import type { Message } from '../db/repositories/messages';
import { findTelegramIntegration } from '../db/repositories/telegram';
import type { PaceLimit } from '../db/send-pacer';
import type { MissingAttachment } from '../services/attachment-sources';
import { type OutboundAttachment, PermanentSendError } from '../core/delivery';
import type { TelegramChannel } from '../providers/telegram/send';
import { chatRenderOf, suppressingRefusals, unsuppressedRecipient } from './chat-delivery';
import type { ChannelDelivery } from './delivery';
import { telegramPaceLimits } from './pacing';
import type { SendObserver } from './send-observer';

export interface TelegramDeliveryDeps {
  db: Sequelize;
  channel: TelegramChannel;
  render: ChannelDelivery['render'];
  /** The message's files; a deleted one is left out and named, as on email. */
  loadAttachments: (workspaceId: string, refs: AttachmentRef[]) => Promise<{ attachments: OutboundAttachment[]; missing: MissingAttachment[] }>;
  /** The pacer: each part after the first waits for the chat's next turn too. */
  pace: (limits: readonly PaceLimit[]) => Promise<void>;
  observer: SendObserver;
}

/**
 * Telegram on the delivery path: the chat id the message was accepted for, its rendered text and its
 * files, sent as the workspace's bot. Every part (text, then each file) keeps the bot's 30/s and the chat's
 * 1/s, and parts already sent are never sent again (providers/telegram/send.ts, PartProgress).
 */
export function createTelegramDelivery(deps: TelegramDeliveryDeps): ChannelDelivery {
  const { db } = deps;
  return {
    provider: 'telegram',
    callsBack: false,
    render: deps.render,

    async prepare(message: Message, stored) {
      const rendered = chatRenderOf(message, stored);
      const chatId = await unsuppressedRecipient(db, deps.observer, 'telegram', message);
      if (chatId === null) return null;
      const integration = await findTelegramIntegration(db, message.workspaceId);
      if (!integration) throw new PermanentSendError('The workspace has no Telegram bot (PUT /integrations/telegram)');
      const { attachments, missing } = await deps.loadAttachments(message.workspaceId, telegramContentOf(message.content).attachments);
      const limits = telegramPaceLimits(integration.botId, chatId);
      const outbound = { messageId: message.id, chatId, text: rendered.text ?? undefined, attachments };
      return {
        limits,
        data: missing.length ? { missingAttachments: missing } : undefined,
        // Read under the claim (this runs after it is taken), so no other attempt is sending parts meanwhile.
        send: () => suppressingRefusals(db, 'telegram', message, async () => deps.channel.send(integration, outbound, {
          sent: await findSentParts(db, message.workspaceId, message.id),
          record: (part, providerPartId) => recordSentPart(db, message.workspaceId, message.id, part, providerPartId),
          nextTurn: () => deps.pace(limits),
        })),
      };
    },
  };
}
