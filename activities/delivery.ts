import { randomUUID } from 'node:crypto';
import { ApplicationFailure } from '@temporalio/activity';
import type { Sequelize } from 'sequelize';
import { inLanes } from '../core/lanes';
import { failMessage, releaseDeliveryClaim, renewDeliveryClaims } from '../db/repositories/message-delivery';
import type { Message, RenderedMessage } from '../db/repositories/messages';
import type { PaceLimit } from '../db/send-pacer';
import { pastRetryDeadline, providerRoute, type RetrySettings } from '../core/breaker';
import type { HandBackWait } from '../db/repositories/dispatch-queue';
import { PermanentSendError, ProviderUnavailableError, type SendReceipt } from '../core/delivery';
import type { ProviderBreaker } from './provider-breaker';
import { isTransientDatabaseError } from '../db/sequelize';
import { countSend, timedProviderCall } from '../services/metrics/sends';
import { untilItHolds } from './database-errors';
import { type KeepAlive, keepAlive } from './delivery-keep-alive';
import { deliverySteps } from './delivery-steps';
import type { HandBackReason, SendObserver } from './send-observer';

/** A message made ready for its provider: one call sends it; `data` goes on the `sent` event. */
export interface Prepared {
  send: () => Promise<SendReceipt>;
  /**
   * The rates its provider call must keep, reserved together for one turn (email: the provider's rate;
   * Telegram: the bot's 30/s and the chat's 1/s; WhatsApp: the sender's rate at Twilio).
   */
  limits: PaceLimit[];
  data?: Record<string, unknown>;
  /** What the channel records from the provider's answer once `sent` is (SMTP: recipients refused at RCPT or DATA). */
  afterSent?: (receipt: SendReceipt) => Promise<void>;
}

/**
 * One channel on the delivery path (email, WhatsApp, Telegram), picked from the message's channel and wired
 * with its provider at worker start: how its content renders, and how a rendered message becomes one provider call, or
 * nothing (null) when the channel ended the message itself (every recipient suppressed meanwhile).
 */
export interface ChannelDelivery {
  readonly provider: string;
  /** Whether the provider sends notifications (SES over SNS): only then can some be parked for a message. */
  readonly callsBack: boolean;
  render: (message: Message) => Promise<RenderedMessage>;
  prepare: (message: Message, rendered: RenderedMessage) => Promise<Prepared | null>;
}

export interface DeliveryDeps {
  db: Sequelize;
  channels: Readonly<Record<string, ChannelDelivery>>;
  observer: SendObserver;
  /** Waits for one turn under every one of these rates (shared by every worker through Redis). */
  pace: (limits: readonly PaceLimit[]) => Promise<void>;
  /** Messages of a bulk batch taken through each stage together (`bulkChunkSize` of the provider's rate). */
  bulkChunk: number;
  /** Records provider notifications that arrived before the provider id was (SES can be that quick). */
  replayParkedEvents: (provider: string, providerMessageId: string) => Promise<unknown>;
  /** The provider routes' circuit breakers (docs/delivery.md "When a provider fails"). */
  breaker: ProviderBreaker;
  /** When a message that failed transiently is tried again from the outbox, and when it is given up. */
  retry: RetrySettings;
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

/**
 * What one delivery attempt came to; the workflow's outcome follows from it. `requeued`: the provider did
 * not take it (down, or a transient failure) and it is back in the outbox, to be dispatched again in a
 * new workflow; the workflows take it, like `not-waiting`, as nothing left to do.
 */
export type DeliveryOutcome = 'sent' | 'suppressed' | 'not-waiting' | 'requeued';

/**
 * What a batch attempt came to: `retry` are the messages to try again later in this workflow (a claim still
 * held, our database), `requeued` those handed back to the outbox (the provider down, transient failures).
 */
export interface BatchDelivery {
  sent: number;
  failed: number;
  retry: string[];
  requeued?: number;
}

/**
 * A bulk batch goes through the stages a chunk at a time: the chunk's reads, render stores, suppression
 * checks and claims are each one statement, and the next chunk is prepared while this one is sent. A
 * chunk is what the provider takes in CHUNK_MS at its rate, so that the messages claimed ahead (what a
 * campaign's pause still lets through) stay a moment's worth: 5 at 20/s, 50 at 200/s and above.
 */
const CHUNK_MS = 250;
const MAX_CHUNK = 50;

export function bulkChunkSize(ratePerSecond: number): number {
  return Math.max(1, Math.min(MAX_CHUNK, Math.floor((ratePerSecond * CHUNK_MS) / 1000)));
}

/** Messages of a chunk handed to the provider at once: enough to keep its connections busy. */
const SEND_LANES = 8;

const WAITING = ['queued', 'sending'];

/** A message prepared for its provider, with the claim its attempt takes before the call. */
interface Ready {
  message: Message;
  channel: ChannelDelivery;
  prepared: Prepared;
  claim: string;
}

/** What every stage of a delivery works with: the worker's dependencies, its timing and the database steps. */
export interface Delivery {
  deps: DeliveryDeps;
  timing: DeliveryTiming;
  steps: ReturnType<typeof deliverySteps>;
}

export function deliveryOf(deps: DeliveryDeps): Delivery {
  const timing = { ...DEFAULT_TIMING, ...deps.timing };
  return { deps, timing, steps: deliverySteps(deps.db, timing.claimLeaseMs, deps.retry) };
}

export function channelOf(delivery: Delivery, message: Message): ChannelDelivery {
  const channel = delivery.deps.channels[message.channel];
  if (!channel) throw new PermanentSendError(`no delivery for the ${message.channel} channel`);
  return channel;
}

/**
 * What the message says, rendered once and stored, so every attempt sends the same bytes. Only an
 * unreachable database is worth another attempt; every other failure is the message's own (its template,
 * its variables, its render budget) and fails it for good.
 */
export async function renderedOf(delivery: Delivery, message: Message, stored: RenderedMessage | null): Promise<RenderedMessage> {
  if (stored) return stored;
  let rendered: RenderedMessage;
  try {
    rendered = await channelOf(delivery, message).render(message);
  } catch (error) {
    if (isTransientDatabaseError(error) || error instanceof PermanentSendError) throw error;
    throw new PermanentSendError(`render: ${error instanceof Error ? error.message : String(error)}`);
  }
  await delivery.steps.saveRender(message.workspaceId, message.id, rendered);
  return rendered;
}

/**
 * The first stage of a delivery: the message read, rendered (once) and made ready for its provider.
 * Rendering here rather than in an activity of its own saves Temporal a task and a workflow task per
 * message. A message that already has a provider id is never sent again, so a retried activity or a
 * reset in the Temporal UI cannot send twice once the provider's answer was recorded.
 */
export async function prepareOne(delivery: Delivery, workspaceId: string, messageId: string): Promise<Ready | DeliveryOutcome> {
  const row = await delivery.steps.read(workspaceId, messageId);
  if (!row) return 'not-waiting';
  const message = row.message;
  // Sent by an earlier attempt whose answer Temporal never got (it timed out, or the workflow was reset).
  if (message.providerMessageId) return 'sent';
  if (!WAITING.includes(message.status)) return 'not-waiting';
  const channel = channelOf(delivery, message);
  const prepared = await channel.prepare(message, await renderedOf(delivery, message, row.rendered));
  if (!prepared) return 'suppressed';
  return { message, channel, prepared, claim: randomUUID() };
}

/**
 * The second stage: the claim, taken in the database before the provider call, so a second attempt
 * beside a live first one finds it held and stands down (retried later, it then finds the message sent).
 */
export async function claimOne(delivery: Delivery, ready: Ready, alive: KeepAlive): Promise<Ready | DeliveryOutcome> {
  const { workspaceId, id } = ready.message;
  const claimed = await delivery.steps.claim(workspaceId, id, ready.claim);
  if (claimed.state === 'done') return 'not-waiting';
  if (claimed.state === 'busy') {
    // Back when the holder's lease would end: then it has either recorded the send or died.
    throw ApplicationFailure.create({
      message: 'another delivery attempt of this message is in flight',
      type: 'DeliveryInFlight',
      nextRetryDelay: claimed.leaseLeftMs + 1_000,
    });
  }
  alive.hold(id, ready.claim);
  if (claimed.previousClaim) delivery.deps.observer.outcomeUnknown(workspaceId, id, claimed.previousClaim);
  return ready;
}

/**
 * A provider call that did not go through. A permanent refusal fails the message (the workflow records
 * it). Anything else hands the message back to the outbox, so it waits without an in-flight slot or a
 * Temporal timer: at once for its next turn when the provider itself is down (which counts against the
 * route's breaker), after its backoff for a failure of its own (a greylisted recipient). Past the retry
 * deadline it is failed instead, so nothing waits forever.
 */
export async function afterFailure(delivery: Delivery, message: Message, route: string, error: unknown): Promise<DeliveryOutcome> {
  const { deps } = delivery;
  if (error instanceof PermanentSendError) throw error;
  const down = error instanceof ProviderUnavailableError;
  if (down) await deps.breaker.failed(route, error);
  const reason = error instanceof Error ? error.message : String(error);
  if (pastRetryDeadline(message.createdAt, new Date(), deps.retry)) {
    throw new PermanentSendError(`not accepted by the provider within ${Math.round(deps.retry.deadlineMs / 3_600_000)} h of retries: ${reason}`);
  }
  if (!down) return handBack(delivery, message, 'transient', 'backoff');
  return handBack(delivery, message, 'provider_unavailable', error.retryAfterMs ?? 'none');
}

export async function handBack(delivery: Delivery, message: Message, reason: HandBackReason, wait: HandBackWait): Promise<DeliveryOutcome> {
  const moved = await delivery.steps.handBack(message.workspaceId, message.id, wait);
  if (moved) delivery.deps.observer.handedBack(reason, 1);
  return moved ? 'requeued' : 'not-waiting';
}

/**
 * The last stage: the provider call under a claim, at most once per claim, and its answer recorded
 * (retried here, inside the attempt, so a lost record never sends again). An attempt whose provider route
 * went down after its message was dispatched hands it back without calling (a batch stops calling the
 * provider as soon as the breaker opens); a probe, dispatched while it was down, calls.
 */
export async function sendClaimed(delivery: Delivery, { message, channel, prepared, claim }: Ready, alive: KeepAlive): Promise<DeliveryOutcome> {
  const { deps, timing, steps } = delivery;
  const { db } = deps;
  const { workspaceId, id } = message;
  const route = providerRoute(message.channel, channel.provider, workspaceId);
  try {
    let receipt: SendReceipt;
    try {
      if (await deps.breaker.standsDown(route, message.dispatchedAt)) {
        await releaseDeliveryClaim(db, workspaceId, id, claim);
        return await handBack(delivery, message, 'breaker_open', 'none');
      }
      // The turn under the provider's rate, taken last so the provider sees the pacer's spacing, not the
      // database's jitter (a claim held while waiting is renewed like any other).
      await deps.pace(prepared.limits);
    } catch (error) {
      await releaseDeliveryClaim(db, workspaceId, id, claim).catch(() => undefined);
      throw error;
    }
    try {
      receipt = await timedProviderCall(channel.provider, message.channel, prepared.send);
    } catch (error) {
      // The provider answered with an error: taken as not sent, so the next attempt need not wait out the
      // lease. (A provider timeout could hide an acceptance; neither SMTP nor SES can be asked.)
      await releaseDeliveryClaim(db, workspaceId, id, claim).catch(() => undefined);
      return await afterFailure(delivery, message, route, error).catch((failure: unknown) => {
        // Refused for good (or past the retry deadline): the workflow fails the message with this error.
        if (failure instanceof PermanentSendError) countSend('failed', channel.provider, message.channel);
        throw failure;
      });
    }
    countSend('sent', channel.provider, message.channel);
    const sent = { ...receipt, messageId: id, data: prepared.data };
    await untilItHolds(() => steps.recordSent(workspaceId, sent), timing.recordDeadlineMs, () => undefined);
    const { afterSent } = prepared;
    if (afterSent) await untilItHolds(() => afterSent(receipt), timing.recordDeadlineMs, () => undefined);
    // Writes only when the route had failures: a probe's success closes it. Not worth failing a sent message for.
    await deps.breaker.succeeded(route).catch(() => undefined);
    // Only a provider that calls back can have parked events; not worth failing a sent message for
    // (the reconciler's sweep records them too).
    if (channel.callsBack) await deps.replayParkedEvents(receipt.provider, receipt.providerMessageId).catch(() => undefined);
    return 'sent';
  } finally {
    alive.release(id);
  }
}

const isReady = (stage: Ready | DeliveryOutcome): stage is Ready => typeof stage !== 'string';
const keepAliveFor = ({ deps, timing }: Delivery, workspaceId: string) =>
  keepAlive(timing, (claims) => renewDeliveryClaims(deps.db, workspaceId, claims, timing.claimLeaseMs));

/** One message's attempt: prepared, claimed and sent under a keep-alive. */
export async function deliverMessage(delivery: Delivery, workspaceId: string, messageId: string): Promise<DeliveryOutcome> {
  const alive = keepAliveFor(delivery, workspaceId);
  try {
    const ready = await prepareOne(delivery, workspaceId, messageId);
    if (!isReady(ready)) return ready;
    const claimed = await claimOne(delivery, ready, alive);
    return isReady(claimed) ? await sendClaimed(delivery, claimed, alive) : claimed;
  } finally {
    alive.stop();
  }
}

/**
 * Delivers a batch of bulk messages in one attempt, each prepared, claimed, sent and recorded on its
 * own, a chunk at a time (each stage of a chunk is one statement; the next chunk is prepared while this
 * one is sent). A permanent failure (its render, a provider refusal) fails that message alone; a
 * provider that did not take a message (down, throttling, a transient failure) gets it back in the
 * outbox (`requeued`), as a single send does; only a claim still held by another attempt is handed back
 * for the workflow to retry later.
 */
export async function deliverMessages(delivery: Delivery, workspaceId: string, messageIds: string[]): Promise<BatchDelivery> {
  const { db } = delivery.deps;
  const alive = keepAliveFor(delivery, workspaceId);
  const result: BatchDelivery = { sent: 0, failed: 0, retry: [], requeued: 0 };
  /** Runs one stage of one message: an outcome ends it (counted), an error fails it or hands it back. */
  const stage = async (messageId: string, work: () => Promise<Ready | DeliveryOutcome>): Promise<Ready | null> => {
    try {
      const next = await work();
      if (isReady(next)) return next;
      if (next === 'sent') result.sent += 1;
      else if (next === 'requeued') result.requeued = (result.requeued ?? 0) + 1;
    } catch (error) {
      if (!(error instanceof PermanentSendError)) result.retry.push(messageId);
      else if (await failMessage(db, workspaceId, messageId, error.message)) result.failed += 1;
    }
    alive.report({ sent: result.sent, failed: result.failed });
    return null;
  };
  const readyAndClaimed = async (chunk: string[]): Promise<Ready[]> => {
    const ready = await Promise.all(chunk.map((id) => stage(id, () => prepareOne(delivery, workspaceId, id))));
    const claimed = await Promise.all(ready.filter((item) => item !== null).map((item) => stage(item.message.id, () => claimOne(delivery, item, alive))));
    return claimed.filter((item) => item !== null);
  };
  const size = delivery.deps.bulkChunk;
  const chunks = Array.from({ length: Math.ceil(messageIds.length / size) }, (_, index) => messageIds.slice(index * size, (index + 1) * size));
  let upcoming = chunks.length ? readyAndClaimed(chunks[0]) : null;
  try {
    for (let index = 0; upcoming; index += 1) {
      const claimed = await upcoming;
      upcoming = index + 1 < chunks.length ? readyAndClaimed(chunks[index + 1]) : null;
      await inLanes(claimed, SEND_LANES, async (item) => {
        await stage(item.message.id, () => sendClaimed(delivery, item, alive));
      });
    }
  } finally {
    // Only a failure to fail a message (the database gone) ends the loop early: the attempt fails and
    // Temporal retries it, and the next chunk's claims lapse with their lease.
    upcoming?.catch(() => undefined);
    alive.stop();
  }
  result.retry = messageIds.filter((id) => result.retry.includes(id));
  return result;
}

/** The messages of a batch whose retries ran out: each failed, with its reason and its quota given back. */
export async function markMessagesFailed(db: Sequelize, workspaceId: string, messageIds: string[], reason: string): Promise<void> {
  await inLanes(messageIds, SEND_LANES, async (messageId) => {
    await failMessage(db, workspaceId, messageId, reason);
  });
}

/** The delivery activities over one worker's channels; each is a named function above. */
export function createDeliveryActivities(deps: DeliveryDeps) {
  const delivery = deliveryOf(deps);
  return {
    deliverMessage: (workspaceId: string, messageId: string) => deliverMessage(delivery, workspaceId, messageId),
    deliverMessages: (workspaceId: string, messageIds: string[]) => deliverMessages(delivery, workspaceId, messageIds),
    /** The end state of a message that will not be sent: failed, with its reason and its quota given back. */
    markMessageFailed: async (workspaceId: string, messageId: string, reason: string): Promise<void> => {
      await failMessage(deps.db, workspaceId, messageId, reason);
    },
    markMessagesFailed: (workspaceId: string, messageIds: string[], reason: string) => markMessagesFailed(deps.db, workspaceId, messageIds, reason),
  };
}
