import type { Sequelize } from 'sequelize';
import type { AttachmentRef } from '../core/attachments';
import { whatsAppContentOf } from '../core/message-content';
import type { Message } from '../db/repositories/messages';
import { PermanentSendError } from '../core/delivery';
import { findTwilioIntegration, insideServiceWindow } from '../db/repositories/whatsapp';
import type { WhatsAppAccounts, WhatsAppChannel, WhatsAppContent as OutboundContent } from '../providers/twilio/whatsapp';
import { chatRenderOf, suppressingRefusals, unsuppressedRecipient } from './chat-delivery';
import type { ChannelDelivery } from './delivery';
import { whatsAppPaceLimits } from './pacing';
import type { SendObserver } from './send-observer';

export interface WhatsAppDeliveryDeps {
  db: Sequelize;
  channel: WhatsAppChannel;
  render: ChannelDelivery['render'];
  /** Signed URLs Twilio fetches the message's files from (a deleted file is left out). */
  mediaUrls: (workspaceId: string, refs: AttachmentRef[]) => Promise<string[]>;
  /** Messages per second Twilio takes from one WhatsApp sender (WHATSAPP_RATE_PER_SECOND). */
  ratePerSecond: number;
  observer: SendObserver;
}

/** The workspaces' Twilio accounts and service windows, as the WhatsApp channel reads them. */
export function whatsAppAccounts(db: Sequelize): WhatsAppAccounts {
  return {
    find: (workspaceId) => findTwilioIntegration(db, workspaceId),
    insideServiceWindow: (workspaceId, phone, now) => insideServiceWindow(db, workspaceId, phone, now),
  };
}

/**
 * WhatsApp on the delivery path: free-form text (its render) or an approved content template, with media,
 * to the E.164 number the message was accepted for, from the workspace's Twilio sender at that sender's
 * rate. Twilio's refusals are classified by the adapter (21211 invalid number: permanent, and the number
 * suppressed; 429: retried).
 */
export function createWhatsAppDelivery(deps: WhatsAppDeliveryDeps): ChannelDelivery {
  const { db } = deps;
  return {
    provider: 'twilio',
    // Twilio posts statuses, which may come before the SID is recorded: those are parked and replayed.
    callsBack: true,
    render: deps.render,

    async prepare(message: Message, stored) {
      const rendered = chatRenderOf(message, stored);
      const to = await unsuppressedRecipient(db, deps.observer, 'whatsapp', message);
      if (to === null) return null;
      const integration = await findTwilioIntegration(db, message.workspaceId);
      if (!integration) throw new PermanentSendError('The workspace has no Twilio integration (PUT /integrations/twilio)');
      const content = whatsAppContentOf(message.content);
      const mediaUrls = await deps.mediaUrls(message.workspaceId, content.attachments);
      const outbound: OutboundContent = content.contentSid
        ? { kind: 'template', contentSid: content.contentSid, contentVariables: content.contentVariables ?? {} }
        : { kind: 'text', body: rendered.text ?? '' };
      if (outbound.kind === 'text' && !outbound.body && mediaUrls.length === 0) throw new PermanentSendError('a WhatsApp message needs a text, a content template or media');
      return {
        limits: whatsAppPaceLimits(integration.whatsappFrom, deps.ratePerSecond),
        send: () => suppressingRefusals(db, 'whatsapp', message, () => deps.channel.send({ workspaceId: message.workspaceId, messageId: message.id, to, content: outbound, mediaUrls })),
      };
    },
  };
}
