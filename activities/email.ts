import { randomUUID } from 'node:crypto';
import { ApplicationFailure, Context } from '@temporalio/activity';
import type { Sequelize } from 'sequelize';
import { formatMailbox, parseMailboxes, type Mailbox } from '../core/addresses';
import { claimDelivery, dropRecipients, failMessage, recordSent, releaseDeliveryClaim, renewDeliveryClaim } from '../db/repositories/message-delivery';
import { findMessage, loadRendered, type Message, type RenderedEmail, saveRendered } from '../db/repositories/messages';
import { findSuppressed } from '../db/repositories/suppressions';
import type { MissingAttachment } from '../services/attachment-sources';
import { type EmailChannel, type OutboundAttachment, type OutboundEmail, PermanentSendError } from './channels/email-channel';
import { buildMime } from './channels/mime';
import { isTransientDatabaseError, untilItHolds } from './database-errors';
import type { SendObserver } from './send-observer';

export interface EmailActivityDeps {
  db: Sequelize;
  channel: EmailChannel;
  /** Renders the message's content or template with its variables (templates issue). */
  render: (message: Message) => Promise<RenderedEmail>;
  /** Loads the message's attachments; a deleted one is left out and named, not an error (the spec's state table). */
  loadAttachments: (message: Message) => Promise<{ attachments: OutboundAttachment[]; missing: MissingAttachment[] }>;
  /** DKIM-signs the raw message with the sending domain's key (domains issue). */
  sign: (workspaceId: string, fromAddress: string, raw: Buffer) => Promise<Buffer>;
  observer: SendObserver;
  /** Records provider notifications that arrived before the provider id was (SES can be that quick). */
  replayParkedEvents: (provider: string, providerMessageId: string) => Promise<unknown>;
  timing?: Partial<DeliveryTiming>;
}

export interface DeliveryTiming {
  /** How long a delivery claim holds without renewal: a dead attempt's claim frees after this. */
  claimLeaseMs: number;
  /** How often a live attempt heartbeats to Temporal and renews its claim. */
  keepAliveMs: number;
  /** How long the attempt keeps trying to record a provider's acceptance before giving up. */
  recordDeadlineMs: number;
}

const DEFAULT_TIMING: DeliveryTiming = { claimLeaseMs: 30_000, keepAliveMs: 2_000, recordDeadlineMs: 60_000 };

/** What one delivery attempt came to; the workflow's outcome follows from it. */
export type DeliveryOutcome = 'sent' | 'suppressed' | 'not-waiting';

const WAITING = ['queued', 'sending'];

function mailboxes(addresses: readonly string[]): Mailbox[] {
  return addresses.flatMap((address) => {
    const parsed = parseMailboxes(address);
    return parsed.ok ? parsed.mailboxes : [];
  });
}

/**
 * Heartbeats from the first line of an attempt until its end, and renews the attempt's delivery claim
 * while it holds one, so neither Temporal nor a second attempt takes a slow but live attempt for dead.
 */
function keepAlive(timing: DeliveryTiming, renew: (claim: string) => Promise<unknown>) {
  const context = Context.current();
  context.heartbeat();
  let claim: string | null = null;
  let lastRenewal = Date.now();
  const timer = setInterval(() => {
    context.heartbeat();
    if (claim && Date.now() - lastRenewal >= timing.claimLeaseMs / 3) {
      lastRenewal = Date.now();
      // A failed renewal is not fatal: the lease still covers two more tries.
      renew(claim).catch(() => undefined);
    }
  }, timing.keepAliveMs);
  return {
    hold(held: string) {
      claim = held;
      lastRenewal = Date.now();
    },
    stop: () => clearInterval(timer),
  };
}

export function createEmailActivities(deps: EmailActivityDeps) {
  const { db, observer } = deps;
  const timing = { ...DEFAULT_TIMING, ...deps.timing };

  /**
   * Leaves out recipients suppressed since acceptance (a backlog may wait hours; an address that bounced,
   * complained or unsubscribed meanwhile is not mailed). Returns the message as it is to be sent, or null
   * when no `to` remains and the message ended failed.
   */
  async function withoutSuppressed(message: Message): Promise<Message | null> {
    const all = [...message.to, ...message.cc, ...message.bcc];
    const suppressed = await findSuppressed(db, message.workspaceId, 'email', mailboxes(all).map((mailbox) => mailbox.address));
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

  async function outboundEmail(message: Message, rendered: RenderedEmail, attachments: OutboundAttachment[]): Promise<OutboundEmail> {
    const [from] = mailboxes([message.fromAddress ?? '']);
    if (!from) throw new PermanentSendError('the message has no valid sender');
    return {
      messageId: message.id,
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
  }

  return {
    /**
     * Renders once and stores the result; 'skip' when the message is no longer waiting to be sent. Only
     * an unreachable database is worth another attempt: any other failure is the message's own (its
     * template, its variables, its budget) and fails it for good.
     */
    async renderEmail(workspaceId: string, messageId: string): Promise<'ready' | 'skip'> {
      const message = await findMessage(db, workspaceId, messageId);
      if (!message || !WAITING.includes(message.status) || message.providerMessageId) return 'skip';
      if (await loadRendered(db, workspaceId, messageId)) return 'ready';
      let rendered: RenderedEmail;
      try {
        rendered = await deps.render(message);
      } catch (error) {
        if (isTransientDatabaseError(error) || error instanceof PermanentSendError) throw error;
        throw new PermanentSendError(`render: ${error instanceof Error ? error.message : String(error)}`);
      }
      await saveRendered(db, workspaceId, messageId, rendered);
      return 'ready';
    },

    /**
     * Hands the message to the provider, at most once per claim. The claim is taken in the database right
     * before the provider call: a second attempt beside a live first one finds it held and stands down
     * (retried later, it then finds the message sent). A message that already has a provider id is never
     * sent again, so a retried activity or a reset in the Temporal UI cannot send twice once the provider's
     * answer was recorded; recording it is retried here, inside the attempt, for the same reason.
     */
    async deliverEmail(workspaceId: string, messageId: string): Promise<DeliveryOutcome> {
      const alive = keepAlive(timing, (claim) => renewDeliveryClaim(db, workspaceId, messageId, claim, timing.claimLeaseMs));
      try {
        const found = await findMessage(db, workspaceId, messageId);
        // Sent by an earlier attempt whose answer Temporal never got (it timed out, or the workflow was reset).
        if (found?.providerMessageId) return 'sent';
        if (!found || !WAITING.includes(found.status)) return 'not-waiting';
        const rendered = await loadRendered(db, workspaceId, messageId);
        if (!rendered) throw new PermanentSendError('the message was never rendered');
        const message = await withoutSuppressed(found);
        if (!message) return 'suppressed';
        const { attachments, missing } = await deps.loadAttachments(message);
        const email = await outboundEmail(message, rendered, attachments);
        const raw = await deps.sign(workspaceId, email.from.address, await buildMime(email));

        const claim = randomUUID();
        const claimed = await claimDelivery(db, workspaceId, messageId, claim, timing.claimLeaseMs);
        if (claimed.state === 'done') return 'not-waiting';
        if (claimed.state === 'busy') {
          throw ApplicationFailure.retryable('another delivery attempt of this message is in flight', 'DeliveryInFlight');
        }
        alive.hold(claim);
        if (claimed.previousClaim) observer.outcomeUnknown(workspaceId, messageId, claimed.previousClaim);

        let receipt: Awaited<ReturnType<EmailChannel['send']>>;
        try {
          receipt = await deps.channel.send(email, raw);
        } catch (error) {
          // The provider answered with a refusal: nothing went out, so the next attempt need not wait.
          await releaseDeliveryClaim(db, workspaceId, messageId, claim).catch(() => undefined);
          throw error;
        }
        // Files deleted since acceptance went out without (the spec); the sent event says which.
        const sent = { ...receipt, data: missing.length ? { missingAttachments: missing } : undefined };
        await untilItHolds(() => recordSent(db, workspaceId, messageId, sent), timing.recordDeadlineMs, () => undefined);
        // Not worth failing a sent message for: the reconciler's sweep records them too.
        await deps.replayParkedEvents(receipt.provider, receipt.providerMessageId).catch(() => undefined);
        return 'sent';
      } finally {
        alive.stop();
      }
    },

    /** The end state of a message that will not be sent: failed, with its reason and its quota given back. */
    async markMessageFailed(workspaceId: string, messageId: string, reason: string): Promise<void> {
      await failMessage(db, workspaceId, messageId, reason);
    },
  };
}
