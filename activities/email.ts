import { Context } from '@temporalio/activity';
import type { Sequelize } from 'sequelize';
import { parseMailboxes, type Mailbox } from '../core/addresses';
import {
  findMessage,
  loadRendered,
  type Message,
  moveStatus,
  recordSent,
  type RenderedEmail,
  saveRendered,
} from '../db/repositories/messages';
import { insertMessageEvent } from '../db/repositories/message-events';
import { type EmailChannel, type OutboundAttachment, PermanentSendError } from './channels/email-channel';
import { buildMime } from './channels/mime';
import type { MissingAttachment } from '../services/attachment-sources';

export interface EmailActivityDeps {
  db: Sequelize;
  channel: EmailChannel;
  /** Renders the message's content or template with its variables (templates issue). */
  render: (message: Message) => Promise<RenderedEmail>;
  /** Loads the message's attachments; a deleted one is left out and named, not an error (the spec's state table). */
  loadAttachments: (message: Message) => Promise<{ attachments: OutboundAttachment[]; missing: MissingAttachment[] }>;
  /** DKIM-signs the raw message with the sending domain's key (domains issue). */
  sign: (workspaceId: string, fromAddress: string, raw: Buffer) => Promise<Buffer>;
}

function mailboxes(addresses: readonly string[]): Mailbox[] {
  return addresses.flatMap((address) => {
    const parsed = parseMailboxes(address);
    return parsed.ok ? parsed.mailboxes : [];
  });
}

export function createEmailActivities(deps: EmailActivityDeps) {
  const { db } = deps;
  return {
    /** Renders once and stores the result; 'skip' when the message is no longer waiting to be sent. */
    async renderEmail(workspaceId: string, messageId: string): Promise<'ready' | 'skip'> {
      const message = await findMessage(db, workspaceId, messageId);
      if (!message || !['queued', 'sending'].includes(message.status) || message.providerMessageId) return 'skip';
      if (!(await loadRendered(db, workspaceId, messageId))) {
        await saveRendered(db, workspaceId, messageId, await deps.render(message));
      }
      return 'ready';
    },

    /**
     * Hands the message to the provider. A message that already has a provider id is not sent again,
     * so a retried activity or a workflow reset in the Temporal UI cannot send twice once the provider's
     * answer was recorded.
     */
    async deliverEmail(workspaceId: string, messageId: string): Promise<void> {
      const message = await findMessage(db, workspaceId, messageId);
      if (!message || message.providerMessageId || !['queued', 'sending'].includes(message.status)) return;
      const rendered = await loadRendered(db, workspaceId, messageId);
      if (!rendered) throw new PermanentSendError('the message was never rendered');
      await moveStatus(db, workspaceId, messageId, ['queued'], 'sending');
      const [from] = mailboxes([message.fromAddress ?? '']);
      if (!from) throw new PermanentSendError('the message has no valid sender');
      const { attachments, missing } = await deps.loadAttachments(message);
      const email = {
        messageId,
        from,
        to: mailboxes(message.to),
        cc: mailboxes(message.cc),
        bcc: mailboxes(message.bcc),
        replyTo: mailboxes((message.content.replyTo as string[] | undefined) ?? []),
        subject: rendered.subject,
        html: rendered.html,
        text: rendered.text,
        headers: rendered.headers,
        attachments,
      };
      const raw = await deps.sign(workspaceId, from.address, await buildMime(email));
      // Heartbeats while the provider works, so a worker that dies mid-send is noticed in seconds and the
      // send retried elsewhere, instead of waiting out the whole activity timeout.
      const heartbeat = setInterval(() => Context.current().heartbeat(), 2_000);
      try {
        const receipt = await deps.channel.send(email, raw);
        // Files deleted since acceptance went out without (the spec); the sent event says which.
        await recordSent(db, workspaceId, messageId, { ...receipt, data: missing.length ? { missingAttachments: missing } : undefined });
      } finally {
        clearInterval(heartbeat);
      }
    },

    async markMessageFailed(workspaceId: string, messageId: string, reason: string): Promise<void> {
      await db.transaction(async (transaction) => {
        const moved = await moveStatus(db, workspaceId, messageId, ['queued', 'sending'], 'failed', transaction);
        if (moved) await insertMessageEvent(db, workspaceId, messageId, { type: 'failed', reason }, transaction);
      });
    },
  };
}
