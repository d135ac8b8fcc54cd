import type { Sequelize } from 'sequelize';
import { createGroupBatcher } from '../core/group-batcher';
import { formatMailbox, parseMailboxes, type Mailbox } from '../core/addresses';
import { listUnsubscribeHeaders } from '../core/list-unsubscribe';
import type { SuppressionReason } from '../core/suppressions';
import type { UnsubscribeClaims } from '../core/unsubscribe-token';
import { dropRecipients, failMessage } from '../db/repositories/message-delivery';
import { carriesUnsubscribe, emailContentOf, isRenderedChat } from '../core/message-content';
import type { Message, RenderedEmail, RenderedMessage } from '../db/repositories/messages';
import type { PaceLimit } from '../db/send-pacer';
import { findSuppressed } from '../db/repositories/suppressions';
import type { MissingAttachment } from '../services/attachment-sources';
import { type OutboundAttachment, PermanentSendError, type SendReceipt } from '../core/delivery';
import type { EmailChannel, OutboundEmail } from '../providers/email-channel';
import { recordRefusals } from './bounce-events';
import type { Suppress } from '../db/repositories/provider-events';
import { buildMime } from '../providers/mime';
import type { ChannelDelivery, Prepared } from './delivery';
import type { SendObserver } from './send-observer';

export interface EmailDeliveryDeps {
  db: Sequelize;
  channel: EmailChannel;
  /** Renders the message's content or template with its variables (templates issue). */
  render: (message: Message) => Promise<RenderedEmail>;
  /** Loads the message's attachments; a deleted one is left out and named, not an error (the spec's state table). */
  loadAttachments: (message: Message) => Promise<{ attachments: OutboundAttachment[]; missing: MissingAttachment[] }>;
  /** DKIM-signs the raw message with the sending domain's key (domains issue). */
  sign: (workspaceId: string, fromAddress: string, raw: Buffer) => Promise<Buffer>;
  /** The public one-click unsubscribe URL for a recipient of a message (signed token under PUBLIC_BASE_URL). */
  unsubscribeUrl: (claims: UnsubscribeClaims) => string;
  observer: SendObserver;
  /** The provider's rate (activities/pacing.ts). */
  limits: PaceLimit[];
  /**
   * The domain of the VERP return paths of mail from this sending domain, or null while its return-path
   * records are not published (activities/return-path-domains.ts); absent: no VERP (SES keeps its own).
   */
  returnPathDomain?: (workspaceId: string, fromDomain: string) => Promise<string | null>;
  /** Adds suppressions for recipients refused for good at SMTP time (hard bounces). */
  suppress: Suppress;
}

function mailboxes(addresses: readonly string[]): Mailbox[] {
  return addresses.flatMap((address) => {
    const parsed = parseMailboxes(address);
    return parsed.ok ? parsed.mailboxes : [];
  });
}

/**
 * Email on the delivery path (activities/delivery.ts): what is rendered, who is left out, and the signed
 * MIME handed to the provider adapter (SMTP or SES, chosen at wiring).
 */
/** The suppressed recipients of a message, looked up together with those of every message prepared beside it. */
export type SuppressionLookup = ReturnType<typeof suppressionLookup>;

/** One lookup for the recipients of every message being prepared at once in a workspace (a bulk chunk). */
export function suppressionLookup(db: Sequelize) {
  return createGroupBatcher<string[], Map<string, SuppressionReason>>(
    async (workspaceId, lists) => {
      const found = await findSuppressed(db, workspaceId, 'email', [...new Set(lists.flat())]);
      return lists.map((addresses) => new Map(addresses.flatMap((address) => {
        const reason = found.get(address);
        return reason ? [[address, reason] as const] : [];
      })));
    },
    { maxBatch: 100, maxInFlight: 4 },
  );
}

/**
 * Leaves out recipients suppressed since acceptance (a backlog may wait hours; an address that bounced,
 * complained or unsubscribed meanwhile is not mailed). Returns the message as it is to be sent, or null
 * when no `to` remains and the message ended failed.
 */
export async function withoutSuppressed({ db, observer }: EmailDeliveryDeps, suppressions: SuppressionLookup, message: Message): Promise<Message | null> {
  const all = [...message.to, ...message.cc, ...message.bcc];
  const suppressed = await suppressions.submit(message.workspaceId, mailboxes(all).map((mailbox) => mailbox.address));
  if (suppressed.size === 0) return message;
  const reasonOf = (mailbox: Mailbox) => suppressed.get(mailbox.address);
  const keep = (list: string[]) => mailboxes(list).filter((mailbox) => !reasonOf(mailbox)).map(formatMailbox);
  const dropped = mailboxes(all).flatMap((mailbox) => {
    const reason = reasonOf(mailbox);
    return reason ? [{ address: mailbox.address, reason }] : [];
  });
  const remaining = { to: keep(message.to), cc: keep(message.cc), bcc: keep(message.bcc) };
  observer.suppressedAtDelivery(message.workspaceId, message.id, dropped.length, remaining.to.length === 0);
  if (remaining.to.length === 0) {
    await failMessage(db, message.workspaceId, message.id, 'suppressed: every to recipient was suppressed after acceptance', { droppedRecipients: dropped });
    return null;
  }
  await dropRecipients(db, message.workspaceId, message.id, remaining, dropped);
  return { ...message, ...remaining };
}

/**
 * Marketing mail, and transactional mail that asked (`listUnsubscribe`), gets RFC 8058 one-click
 * unsubscribe headers. One header holds one link, so it names the first `to` recipient still on the
 * message: marketing messages are addressed to one contact each.
 */
export function unsubscribeHeaders(deps: Pick<EmailDeliveryDeps, 'unsubscribeUrl'>, message: Message, to: Mailbox[]): Record<string, string> {
  if (!carriesUnsubscribe(message.kind, emailContentOf(message.content)) || to.length === 0) return {};
  return listUnsubscribeHeaders(deps.unsubscribeUrl({ workspaceId: message.workspaceId, messageId: message.id, address: to[0].address }));
}

export async function outboundEmail(deps: EmailDeliveryDeps, message: Message, rendered: RenderedEmail, attachments: OutboundAttachment[]): Promise<OutboundEmail> {
  const [from] = mailboxes([message.fromAddress ?? '']);
  if (!from) throw new PermanentSendError('the message has no valid sender');
  const to = mailboxes(message.to);
  const returnPathDomain = deps.returnPathDomain ? await deps.returnPathDomain(message.workspaceId, from.address.slice(from.address.lastIndexOf('@') + 1)) : null;
  return {
    returnPathDomain,
    messageId: message.id,
    from,
    to,
    cc: mailboxes(message.cc),
    bcc: mailboxes(message.bcc),
    replyTo: mailboxes(emailContentOf(message.content).replyTo),
    subject: rendered.subject,
    html: rendered.html,
    text: rendered.text,
    headers: { ...rendered.headers, ...unsubscribeHeaders(deps, message, to) },
    attachments,
  };
}

/** A rendered email made ready for its provider: recipients suppressed meanwhile left out, attachments loaded, MIME built and signed. */
export async function prepareEmail(deps: EmailDeliveryDeps, suppressions: SuppressionLookup, found: Message, stored: RenderedMessage): Promise<Prepared | null> {
  const { db } = deps;
  if (isRenderedChat(stored)) throw new PermanentSendError(`an email message holds a ${stored.channel} render`);
  const rendered: RenderedEmail = stored;
  const message = await withoutSuppressed(deps, suppressions, found);
  if (!message) return null;
  const { attachments, missing } = await deps.loadAttachments(message);
  const email = await outboundEmail(deps, message, rendered, attachments);
  const raw = await deps.sign(message.workspaceId, email.from.address, await buildMime(email));
  // Files deleted since acceptance went out without (the spec); the sent event says which.
  return {
    send: () => deps.channel.send(email, raw),
    limits: deps.limits,
    data: missing.length ? { missingAttachments: missing } : undefined,
    // Recipients the relay refused while we waited bounce now, once `sent` is recorded.
    afterSent: (receipt: SendReceipt) => (receipt.refused ? recordRefusals(db, deps.suppress, message, receipt.provider, receipt.providerMessageId, receipt.refused) : Promise.resolve()),
  };
}

/** The email channel on the delivery path; its steps are the named functions above. */
export function createEmailDelivery(deps: EmailDeliveryDeps): ChannelDelivery {
  const suppressions = suppressionLookup(deps.db);
  return {
    provider: deps.channel.provider,
    callsBack: deps.channel.callsBack,
    render: deps.render,
    prepare: (found: Message, stored: RenderedMessage) => prepareEmail(deps, suppressions, found, stored),
  };
}
