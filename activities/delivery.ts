import { randomUUID } from 'node:crypto';
import { ApplicationFailure, Context } from '@temporalio/activity';
import type { Sequelize } from 'sequelize';
import { createGroupBatcher } from '../core/group-batcher';
import { inLanes } from '../core/lanes';
import {
  claimDeliveries,
  type DeliveryClaim,
  failMessage,
  recordSent,
  releaseDeliveryClaim,
  renewDeliveryClaim,
  type SentReceipt,
} from '../db/repositories/message-delivery';
import { findMessagesToSend, type Message, type RenderedEmail, saveRendered } from '../db/repositories/messages';
import { PermanentSendError, type SendReceipt } from './channels/email-channel';
import { isTransientDatabaseError, untilItHolds } from './database-errors';
import type { SendObserver } from './send-observer';

/** A message made ready for its provider: one call sends it; `data` goes on the `sent` event. */
export interface Prepared {
  send: () => Promise<SendReceipt>;
  data?: Record<string, unknown>;
}

/**
 * One channel on the delivery path (email today; WhatsApp and Telegram with their issue), picked from the
 * message's channel: how its content renders, and how a rendered message becomes one provider call, or
 * nothing (null) when the channel ended the message itself (every recipient suppressed meanwhile).
 */
export interface ChannelDelivery {
  readonly provider: string;
  /** Whether the provider sends notifications (SES over SNS): only then can some be parked for a message. */
  readonly callsBack: boolean;
  render: (message: Message) => Promise<RenderedEmail>;
  prepare: (message: Message, rendered: RenderedEmail) => Promise<Prepared | null>;
}

export interface DeliveryDeps {
  db: Sequelize;
  channels: Readonly<Record<string, ChannelDelivery>>;
  observer: SendObserver;
  /** Waits for the message's turn under its provider's rate (shared by every worker). */
  pace: (message: Message) => Promise<void>;
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

const DEFAULT_TIMING: DeliveryTiming = { claimLeaseMs: 15_000, keepAliveMs: 2_000, recordDeadlineMs: 60_000 };

/** What one delivery attempt came to; the workflow's outcome follows from it. */
export type DeliveryOutcome = 'sent' | 'suppressed' | 'not-waiting';

/** What a batch attempt came to: `retry` are the messages to try again later (throttled, provider down). */
export interface BatchDelivery {
  sent: number;
  failed: number;
  retry: string[];
}

/** Messages of a batch prepared and sent at once: enough to keep a provider's connections busy. */
const BATCH_LANES = 8;

const WAITING = ['queued', 'sending'];

/**
 * Heartbeats from the first line of an attempt until its end, and renews the delivery claims the attempt
 * holds, so neither Temporal nor a second attempt takes a slow but live attempt for dead. A batch holds
 * several claims at once; `progress` goes with each heartbeat.
 */
function keepAlive(timing: DeliveryTiming, renew: (messageId: string, claim: string) => Promise<unknown>) {
  const context = Context.current();
  context.heartbeat();
  const claims = new Map<string, string>();
  let progress: unknown;
  let lastRenewal = Date.now();
  const timer = setInterval(() => {
    context.heartbeat(progress);
    if (claims.size && Date.now() - lastRenewal >= timing.claimLeaseMs / 3) {
      lastRenewal = Date.now();
      // A failed renewal is not fatal: the lease still covers two more tries.
      for (const [messageId, claim] of claims) renew(messageId, claim).catch(() => undefined);
    }
  }, timing.keepAliveMs);
  return {
    hold(messageId: string, claim: string) {
      claims.set(messageId, claim);
    },
    release(messageId: string) {
      claims.delete(messageId);
    },
    report(value: unknown) {
      progress = value;
    },
    stop: () => clearInterval(timer),
  };
}

type KeepAlive = ReturnType<typeof keepAlive>;

/**
 * The database steps every delivery takes (read, store the render, claim, record), group-committed per
 * workspace across all the attempts this worker runs: under load one statement serves many messages, so a
 * batch of 500 costs a few dozen round trips per step instead of 500; an idle workspace's single send
 * still goes at once. Each message keeps its own claim and its own outcome.
 */
function deliverySteps(db: Sequelize, claimLeaseMs: number) {
  const options = { maxBatch: 100, maxInFlight: 4 };
  const reads = createGroupBatcher<string, { message: Message; rendered: RenderedEmail | null } | null>(async (workspaceId, ids) => {
    const found = await findMessagesToSend(db, workspaceId, ids);
    return ids.map((id) => found.get(id) ?? null);
  }, options);
  const renders = createGroupBatcher<{ messageId: string; rendered: RenderedEmail }, void>(async (workspaceId, items) => {
    await saveRendered(db, workspaceId, items);
    return [];
  }, options);
  const claims = createGroupBatcher<{ messageId: string; claim: string }, DeliveryClaim>(
    (workspaceId, attempts) => claimDeliveries(db, workspaceId, attempts, claimLeaseMs),
    options,
  );
  const records = createGroupBatcher<SentReceipt, void>(async (workspaceId, receipts) => {
    await recordSent(db, workspaceId, receipts);
    return [];
  }, options);
  return {
    read: (workspaceId: string, messageId: string) => reads.submit(workspaceId, messageId),
    saveRender: (workspaceId: string, messageId: string, rendered: RenderedEmail) => renders.submit(workspaceId, { messageId, rendered }),
    claim: (workspaceId: string, messageId: string, claim: string) => claims.submit(workspaceId, { messageId, claim }),
    recordSent: (workspaceId: string, receipt: SentReceipt) => records.submit(workspaceId, receipt),
  };
}

export function createDeliveryActivities(deps: DeliveryDeps) {
  const { db, observer } = deps;
  const timing = { ...DEFAULT_TIMING, ...deps.timing };
  const steps = deliverySteps(db, timing.claimLeaseMs);

  function channelOf(message: Message): ChannelDelivery {
    const channel = deps.channels[message.channel];
    if (!channel) throw new PermanentSendError(`no delivery for the ${message.channel} channel`);
    return channel;
  }

  /**
   * What the message says, rendered once and stored, so every attempt sends the same bytes. Only an
   * unreachable database is worth another attempt; every other failure is the message's own (its template,
   * its variables, its render budget) and fails it for good.
   */
  async function renderedOf(message: Message, stored: RenderedEmail | null): Promise<RenderedEmail> {
    if (stored) return stored;
    let rendered: RenderedEmail;
    try {
      rendered = await channelOf(message).render(message);
    } catch (error) {
      if (isTransientDatabaseError(error) || error instanceof PermanentSendError) throw error;
      throw new PermanentSendError(`render: ${error instanceof Error ? error.message : String(error)}`);
    }
    await steps.saveRender(message.workspaceId, message.id, rendered);
    return rendered;
  }

  /**
   * Renders one message (once) and hands it to the provider, at most once per claim. Rendering here rather
   * than in an activity of its own saves Temporal a task and a workflow task per message. The claim is
   * taken in the database right before the provider call: a second attempt beside a live first one finds
   * it held and stands down
   * (retried later, it then finds the message sent). A message that already has a provider id is never
   * sent again, so a retried activity or a reset in the Temporal UI cannot send twice once the provider's
   * answer was recorded; recording it is retried here, inside the attempt, for the same reason.
   */
  async function deliverOne(workspaceId: string, messageId: string, alive: KeepAlive): Promise<DeliveryOutcome> {
    const row = await steps.read(workspaceId, messageId);
    if (!row) return 'not-waiting';
    const found = row.message;
    // Sent by an earlier attempt whose answer Temporal never got (it timed out, or the workflow was reset).
    if (found.providerMessageId) return 'sent';
    if (!WAITING.includes(found.status)) return 'not-waiting';
    const channel = channelOf(found);
    const prepared = await channel.prepare(found, await renderedOf(found, row.rendered));
    if (!prepared) return 'suppressed';

    const claim = randomUUID();
    const claimed = await steps.claim(workspaceId, messageId, claim);
    if (claimed.state === 'done') return 'not-waiting';
    if (claimed.state === 'busy') {
      // Back when the holder's lease would end: then it has either recorded the send or died.
      throw ApplicationFailure.create({
        message: 'another delivery attempt of this message is in flight',
        type: 'DeliveryInFlight',
        nextRetryDelay: claimed.leaseLeftMs + 1_000,
      });
    }
    alive.hold(messageId, claim);
    try {
      if (claimed.previousClaim) observer.outcomeUnknown(workspaceId, messageId, claimed.previousClaim);
      let receipt: SendReceipt;
      try {
        // The turn under the provider's rate, taken last so the provider sees the pacer's spacing, not the
        // database's jitter (a claim held while waiting is renewed like any other).
        await deps.pace(found);
        receipt = await prepared.send();
      } catch (error) {
        // No turn, or the provider answered with an error: taken as not sent, so the next attempt need not
        // wait out the lease. (A provider timeout could hide an acceptance; neither SMTP nor SES can be asked.)
        await releaseDeliveryClaim(db, workspaceId, messageId, claim).catch(() => undefined);
        throw error;
      }
      const sent = { ...receipt, messageId, data: prepared.data };
      await untilItHolds(() => steps.recordSent(workspaceId, sent), timing.recordDeadlineMs, () => undefined);
      // Only a provider that calls back can have parked events; not worth failing a sent message for
      // (the reconciler's sweep records them too).
      if (channel.callsBack) await deps.replayParkedEvents(receipt.provider, receipt.providerMessageId).catch(() => undefined);
      return 'sent';
    } finally {
      alive.release(messageId);
    }
  }

  return {
    async deliverMessage(workspaceId: string, messageId: string): Promise<DeliveryOutcome> {
      const alive = keepAlive(timing, (id, claim) => renewDeliveryClaim(db, workspaceId, id, claim, timing.claimLeaseMs));
      try {
        return await deliverOne(workspaceId, messageId, alive);
      } finally {
        alive.stop();
      }
    },

    /**
     * Delivers a batch of bulk messages in one attempt, each rendered, claimed, sent and recorded on its
     * own. A permanent failure (its render, a provider refusal) fails that message alone; a transient one (throttling, a provider outage, a claim
     * still held) is handed back for the workflow to retry later, with the messages not reached yet.
     */
    async deliverMessages(workspaceId: string, messageIds: string[]): Promise<BatchDelivery> {
      const alive = keepAlive(timing, (id, claim) => renewDeliveryClaim(db, workspaceId, id, claim, timing.claimLeaseMs));
      const result: BatchDelivery = { sent: 0, failed: 0, retry: [] };
      try {
        await inLanes(messageIds, BATCH_LANES, async (messageId) => {
          try {
            if ((await deliverOne(workspaceId, messageId, alive)) === 'sent') result.sent += 1;
          } catch (error) {
            if (error instanceof PermanentSendError) {
              if (await failMessage(db, workspaceId, messageId, error.message)) result.failed += 1;
            } else {
              result.retry.push(messageId);
            }
          }
          alive.report({ sent: result.sent, failed: result.failed });
        });
      } finally {
        alive.stop();
      }
      result.retry = messageIds.filter((id) => result.retry.includes(id));
      return result;
    },

    /** The end state of a message that will not be sent: failed, with its reason and its quota given back. */
    async markMessageFailed(workspaceId: string, messageId: string, reason: string): Promise<void> {
      await failMessage(db, workspaceId, messageId, reason);
    },

    /** The same for the messages of a batch whose retries ran out. */
    async markMessagesFailed(workspaceId: string, messageIds: string[], reason: string): Promise<void> {
      await inLanes(messageIds, BATCH_LANES, async (messageId) => {
        await failMessage(db, workspaceId, messageId, reason);
      });
    },
  };
}
