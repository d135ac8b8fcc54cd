import { formatMailbox } from '../../core/addresses';
import { sanitizeReceivedHtml } from '../../core/inbox/received-html';
import type { InboxMessageRecord } from '../../db/repositories/inbox-messages';
import type { ThreadRecord } from '../../db/repositories/inbox-threads';
import type { InboxRecord } from '../../db/repositories/inboxes';
import type { EmailMessageView, InboxView, ThreadView } from './schemas';

export function inboxView(inbox: InboxRecord): InboxView {
  return {
    id: inbox.id,
    localPart: inbox.localPart,
    address: inbox.address,
    displayName: inbox.displayName,
    status: inbox.status,
    domainId: inbox.domainId,
    inboundEnabled: inbox.inboundEnabled,
    createdAt: inbox.createdAt.toISOString(),
  };
}

export function threadView(thread: ThreadRecord): ThreadView {
  return {
    id: thread.id,
    subject: thread.subject,
    folder: thread.folder,
    participants: thread.participants,
    messageCount: thread.messageCount,
    unreadCount: thread.unreadCount,
    lastMessageAt: thread.lastMessageAt.toISOString(),
    createdAt: thread.createdAt.toISOString(),
  };
}

/**
 * Attachments as metadata only: an inbound file's blob key is ours, never shown. Received HTML is sanitized
 * (core/inbox/received-html.ts) unless the caller asked for it raw; ours is shown as written.
 */
export function emailMessageView(message: InboxMessageRecord, html: 'sanitized' | 'raw' = 'sanitized'): EmailMessageView {
  const sanitize = message.direction === 'in' && html === 'sanitized' && message.html !== null;
  return {
    id: message.id,
    direction: message.direction,
    status: message.status,
    subject: message.subject,
    from: message.fromAddress ? formatMailbox({ name: message.fromName, address: message.fromAddress }) : null,
    to: message.to,
    cc: message.cc,
    bcc: message.direction === 'out' ? message.bcc : [],
    html: sanitize ? sanitizeReceivedHtml(message.html as string) : message.html,
    text: message.text,
    replyText: message.replyText,
    messageIdHeader: message.messageIdHeader,
    inReplyTo: message.inReplyTo,
    references: message.references,
    attachments: message.attachments.map((attachment) => ({
      id: attachment.id ?? null,
      filename: attachment.filename ?? null,
      contentType: attachment.contentType ?? null,
      size: attachment.size ?? null,
      contentId: attachment.contentId ?? null,
    })),
    auth: message.direction === 'in' ? message.auth : null,
    malformed: message.malformed,
    sendId: message.messageId,
    createdAt: message.createdAt.toISOString(),
  };
}
