import type { Client } from '@temporalio/client';
import type { Logger } from 'pino';
import type { Sequelize } from 'sequelize';
import type { Config } from '../core/config';
import {
  BATCH_DEFERRAL_MS, chunksOf, forgetStaleGathering, type DispatchClass, type DispatchedMessage, inFlightBounds, type InFlightSettings, minimumClaim, planTransactional,
  transactionalBatchMinimum,
} from '../core/dispatch';
import type { Registry } from 'prom-client';
import { Gauge } from 'prom-client';
import { recoveryBound, routeChannel, routeWorkspace } from '../core/breaker';
import {
  backloggedWorkspaces, channelsWithWaiting, claimFairly, findExpiredWaiting, markDispatched, releaseDispatchLease, renewDispatchLease,
} from '../db/repositories/dispatch-queue';
import { failMessage } from '../db/repositories/message-delivery';
import { type BreakerState, findOpenBreakers, takeProbeTurn } from '../db/repositories/provider-breakers';
import { withLinkedSpan, withTraceparent } from '../infra/trace-context';
import { startSendBatchWorkflow, startSendWorkflow } from '../temporal/sends';
import { startRefused } from '../temporal/start-once';
import { handOver, type OutboxLoop, runOutboxLoop, whileLeased } from './outbox-loop';

export interface DispatcherOptions {
  db: Sequelize;
  client: Client;
  taskQueuePrefix: string;
  logger: Logger;
  /**
   * Each channel the engine delivers, with what its provider takes, and from how many transactional messages
   * waiting a workspace's travel in batch workflows (SEND_BATCH_THRESHOLD; 0 or absent: never).
   */
  channels: Array<{ channel: string; batchThreshold?: number } & InFlightSettings>;
  /** Time between rounds when nothing was waiting or everything was in flight. */
  intervalMs: number;
  /** While a provider route is down: how often one message goes through as a probe, and when waiting ones end failed. */
  breaker?: { probeIntervalMs: number; deadlineMs: number };
  /** Where each route's breaker state is exported (messaging_provider_breaker_open). */
  registry?: Registry;
}

/**
 * The channels the engine delivers and what their providers take, from the configuration. Each channel
 * has its own bound and its own fair pick between workspaces, so a WhatsApp backlog never holds an email
 * back. The chat channels' rates are one sender's (Twilio) or one bot's (Telegram): a conservative bound
 * when several workspaces send at once, each at its own sender's rate.
 */
export function dispatcherChannels(config: Config): DispatcherOptions['channels'] {
  const shared = {
    leadTimeMs: config.SEND_LEAD_TIME_MS,
    bulkLeadTimeMs: config.BULK_LEAD_TIME_MS,
    batchSize: config.BULK_BATCH_SIZE,
    minimum: config.SEND_IN_FLIGHT_MIN,
    maximum: config.SEND_IN_FLIGHT_MAX,
    batchThreshold: config.SEND_BATCH_THRESHOLD,
  };
  return [
    { channel: 'email', ratePerSecond: config.SEND_RATE_PER_SECOND, ...shared },
    { channel: 'whatsapp', ratePerSecond: config.WHATSAPP_RATE_PER_SECOND, ...shared },
    { channel: 'telegram', ratePerSecond: config.TELEGRAM_RATE_PER_SECOND, ...shared },
  ];
}

/** The breaker settings of the dispatcher, from the configuration. */
export function dispatcherBreaker(config: Config): NonNullable<DispatcherOptions['breaker']> {
  return { probeIntervalMs: config.PROVIDER_PROBE_INTERVAL_MS, deadlineMs: config.SEND_RETRY_DEADLINE_MS };
}

/**
 * A dispatcher that dies mid-round frees its rows after this; a live round renews it every LEASE_RENEW_MS
 * while it starts workflows, so it can be short without a slow Temporal costing a round its rows.
 */
export const DISPATCH_LEASE_MS = 5_000;
const LEASE_RENEW_MS = 1_500;
/** How often messages of a route that stays down are checked against the retry deadline. */
const EXPIRY_SWEEP_MS = 60_000;
const EXPIRY_SWEEP_LIMIT = 500;
const DEFAULT_BREAKER = { probeIntervalMs: 1_500, deadlineMs: 86_400_000 };
/** After a channel's route closes, its bound grows from a tenth to all of it over this long (core/breaker.ts). */
const RECOVERY_RAMP_MS = 5_000;
/** Workflow starts awaited at once: Temporal answers each in a few ms, and a round is bounded anyway. */
const CONCURRENT_STARTS = 32;

/** Bulk messages of one workspace and kind travel together, in batches of at most `size`. */
function batchesOf(messages: readonly DispatchedMessage[], size: number): DispatchedMessage[][] {
  const groups = new Map<string, DispatchedMessage[]>();
  for (const message of messages) {
    const key = `${message.workspaceId}/${message.kind}/${message.campaignId ?? ''}`;
    const group = groups.get(key);
    if (group) group.push(message);
    else groups.set(key, [message]);
  }
  return [...groups.values()].flatMap((group) => chunksOf(group, size));
}

/** A dispatcher's settings and what it remembers between rounds. */
export interface Dispatch {
  options: DispatcherOptions;
  breaker: NonNullable<DispatcherOptions['breaker']>;
  /** messaging_provider_breaker_open, when a registry is given. */
  breakerGauge?: Gauge;
  /** When messages of open routes were last checked against the retry deadline. */
  lastSweep: number;
  /** Channels whose whole route was down in the last round, and when each came back. */
  down: Set<string>;
  closedAt: Map<string, number>;
  /** Per channel and backlogged workspace, since when its claimed messages have been put back to gather a batch. */
  gathering: Map<string, number>;
}

type Started = { messageId: string; workflowId: string; round: number };

/** A message's own `send:<id>` workflow. */
async function startOne(options: DispatcherOptions, message: DispatchedMessage): Promise<Started[]> {
  // The start joins the accepting request's trace (the client interceptor's span is a child of it).
  const workflowId = await withTraceparent(message.traceparent, () => startSendWorkflow(options.client, options.taskQueuePrefix, message));
  return [{ messageId: message.messageId, workflowId, round: message.round }];
}

/**
 * A batch's workflow. Temporal refuses a transactional batch outright when the cluster lacks the MessageIds
 * search attribute: its messages then go one workflow each, as before batching, rather than wait in the
 * outbox while the refusal repeats every round.
 */
async function startBatch(options: DispatcherOptions, dispatchClass: DispatchClass, batch: DispatchedMessage[]): Promise<Started[]> {
  try {
    // Messages of many requests: the start's span links to each request's trace rather than joining one.
    const workflowId = await withLinkedSpan('dispatch send-batch', batch.map((message) => message.traceparent), { 'messaging.batch.message_count': batch.length }, () =>
      startSendBatchWorkflow(options.client, options.taskQueuePrefix, batch));
    return batch.map((message) => ({ messageId: message.messageId, workflowId, round: message.round }));
  } catch (err) {
    if (dispatchClass === 'bulk' || !startRefused(err)) throw err;
    options.logger.error(
      { err, workspaceId: batch[0].workspaceId },
      'dispatcher: Temporal refused a transactional batch (is the MessageIds search attribute registered? docs/delivery.md#search-attributes); starting its messages one workflow each',
    );
    const started: Started[] = [];
    for (const message of batch) started.push(...(await startOne(options, message)));
    return started;
  }
}

/**
 * Starts the claimed messages' workflows and marks them dispatched: one per bulk batch, and one per
 * transactional message unless `batched` names it (adaptive batching: then its workspace's messages of the
 * round travel in batch workflows).
 */
export async function startClaimed(
  options: DispatcherOptions, dispatchClass: DispatchClass, messages: DispatchedMessage[], batchSize: number, batched: DispatchedMessage[][] = [],
): Promise<number> {
  const started: Started[] = [];
  const inBatches = new Set(batched.flat().map((message) => message.messageId));
  const units = dispatchClass === 'transactional'
    ? [...batched, ...messages.filter((message) => !inBatches.has(message.messageId)).map((message) => [message])]
    : batchesOf(messages, batchSize);
  // Keeps the round's rows while it starts their workflows: the lease is short so a dead round's rows free fast.
  const renew = () => {
    const waiting = new Set(messages.map((message) => message.messageId));
    for (const item of started) waiting.delete(item.messageId);
    return renewDispatchLease(options.db, [...waiting], DISPATCH_LEASE_MS);
  };
  await whileLeased(LEASE_RENEW_MS, renew, () =>
    handOver(units, CONCURRENT_STARTS, async (unit) => {
      const alone = dispatchClass === 'transactional' && !inBatches.has(unit[0].messageId);
      started.push(...(alone ? await startOne(options, unit[0]) : await startBatch(options, dispatchClass, unit)));
    }, (err, unit) => {
      // The lease keeps the rows until it ends; the next round after that starts them.
      options.logger.warn({ err, messageId: unit[0].messageId }, 'dispatcher: workflow start failed; retried when the lease ends');
    }));
  await markDispatched(options.db, started);
  return started.length;
}

/**
 * One message of a route that is down, at most once per probe interval across all dispatchers (the
 * breaker's row decides who): its success closes the route, and the rounds after it grow to the full bound
 * within RECOVERY_RAMP_MS.
 */
export async function probeRoute(dispatch: Dispatch, channel: DispatcherOptions['channels'][number], route: BreakerState): Promise<number> {
  const { options } = dispatch;
  if (!(await takeProbeTurn(options.db, route.route, dispatch.breaker.probeIntervalMs))) return 0;
  const workspace = routeWorkspace(route.route);
  for (const dispatchClass of ['transactional', 'bulk'] as const) {
    const claimed = await claimFairly(options.db, {
      channel: channel.channel, dispatchClass, bound: 1, leaseMs: DISPATCH_LEASE_MS, capacity: 1,
      ...(workspace && { onlyWorkspaces: [workspace] }),
    });
    if (claimed.length) return startClaimed(options, dispatchClass, claimed, channel.batchSize);
  }
  return 0;
}

/** Messages of a route down for longer than the retry deadline end failed: nothing waits forever. */
export async function expireWaiting(dispatch: Dispatch, open: readonly BreakerState[]): Promise<void> {
  if (Date.now() - dispatch.lastSweep < EXPIRY_SWEEP_MS) return;
  dispatch.lastSweep = Date.now();
  const { db } = dispatch.options;
  for (const route of open) {
    const expired = await findExpiredWaiting(db, routeChannel(route.route), routeWorkspace(route.route), dispatch.breaker.deadlineMs, EXPIRY_SWEEP_LIMIT);
    for (const message of expired) {
      await failMessage(db, message.workspaceId, message.messageId, 'the provider stayed unavailable past the retry deadline', { route: route.route });
    }
  }
}

/**
 * One channel's share of a round: probes its open routes, then claims up to its bound per class unless its whole
 * route is down. With nothing `waiting`, only the route's state is kept (when it came back).
 */
export async function dispatchChannel(dispatch: Dispatch, channel: DispatcherOptions['channels'][number], open: readonly BreakerState[], waiting: boolean): Promise<number> {
  let dispatched = 0;
  const routes = open.filter((route) => routeChannel(route.route) === channel.channel);
  // Email is one route for every workspace: down, the whole channel waits. A chat route is one
  // workspace's sender or bot: only that workspace waits.
  const channelDown = routes.some((route) => routeWorkspace(route.route) === null);
  if (waiting) for (const route of routes) dispatched += await probeRoute(dispatch, channel, route);
  if (channelDown) {
    dispatch.down.add(channel.channel);
    return dispatched;
  }
  if (dispatch.down.delete(channel.channel)) dispatch.closedAt.set(channel.channel, Date.now());
  if (!waiting) return dispatched;
  const sinceClosed = Date.now() - (dispatch.closedAt.get(channel.channel) ?? 0);
  const skipWorkspaces = routes.map((route) => routeWorkspace(route.route)).filter((workspace) => workspace !== null);
  const bounds = inFlightBounds(channel);
  for (const dispatchClass of ['transactional', 'bulk'] as const) {
    const claimed = await claimFairly(dispatch.options.db, {
      channel: channel.channel,
      dispatchClass,
      bound: recoveryBound(bounds[dispatchClass], sinceClosed, RECOVERY_RAMP_MS),
      leaseMs: DISPATCH_LEASE_MS,
      minimum: minimumClaim(dispatchClass, channel.batchSize),
      skipWorkspaces,
    });
    if (claimed.length === 0) continue;
    dispatched += dispatchClass === 'transactional'
      ? await startTransactional(dispatch, channel, claimed, bounds.transactional)
      : await startClaimed(dispatch.options, dispatchClass, claimed, channel.batchSize);
  }
  return dispatched;
}

/**
 * Adaptive batching of a round's transactional messages (core/dispatch.ts planTransactional): a workspace
 * with SEND_BATCH_THRESHOLD or more waiting sends them in batch workflows; one that claimed less than a
 * useful batch this round gives them back to the outbox for up to BATCH_DEFERRAL_MS, so the next rounds
 * gather more.
 */
export async function startTransactional(
  dispatch: Dispatch, channel: DispatcherOptions['channels'][number], claimed: DispatchedMessage[], bound: number,
): Promise<number> {
  const { options } = dispatch;
  const threshold = channel.batchThreshold ?? 0;
  const backlogged = await backloggedWorkspaces(options.db, channel.channel, claimed.map((message) => message.workspaceId), threshold);
  const key = (workspaceId: string) => `${channel.channel}/${workspaceId}`;
  const now = Date.now();
  forgetStaleGathering(dispatch.gathering, now);
  const plan = planTransactional(claimed, backlogged, transactionalBatchMinimum(bound), (workspaceId) => {
    const since = dispatch.gathering.get(key(workspaceId)) ?? now;
    dispatch.gathering.set(key(workspaceId), since);
    return now - since < BATCH_DEFERRAL_MS;
  });
  for (const batch of plan.batches) dispatch.gathering.delete(key(batch[0].workspaceId));
  await releaseDispatchLease(options.db, plan.deferred.map((message) => message.messageId));
  const started = plan.single.concat(plan.batches.flat());
  return started.length ? startClaimed(options, 'transactional', started, channel.batchSize, plan.batches) : 0;
}

/** messaging_provider_breaker_open, in the worker's registry (exportBreakers sets it each round). */
export function createBreakerGauge(registry: Registry): Gauge {
  return new Gauge({
    name: 'messaging_provider_breaker_open',
    help: 'Open provider route breakers by channel and route (email:<provider>: 1 when open; <channel>:workspaces: how many workspaces\' chat routes are open); their messages wait in the outbox while the dispatcher probes them',
    labelNames: ['channel', 'route'],
    registers: [registry],
  });
}

/**
 * The open breakers as a gauge, one series per channel and route: the email route by its provider
 * (`email:smtp`, 0 or 1); chat routes, one per workspace's sender or bot, counted together under
 * `<channel>:workspaces` (how many are open), since a workspace id as a label would make a series per tenant
 * (services/metrics/registry.ts). Which workspaces: `provider_breakers` in the database, or the log line
 * of each change.
 */
export function exportBreakers(gauge: Gauge, channels: readonly string[], open: readonly BreakerState[]): void {
  gauge.reset();
  for (const channel of channels) if (channel !== 'email') gauge.set({ channel, route: `${channel}:workspaces` }, 0);
  for (const route of open) {
    const channel = routeChannel(route.route);
    if (routeWorkspace(route.route) === null) gauge.set({ channel, route: route.route }, 1);
    else gauge.inc({ channel, route: `${channel}:workspaces` });
  }
}

/**
 * One round: the open breakers exported and swept, then every channel in turn; a channel with nothing in the
 * outbox claims nothing (an idle round is two statements, not a transaction per channel and class: every worker
 * process runs one every SEND_DISPATCH_INTERVAL_MS).
 */
export async function dispatchRound(dispatch: Dispatch): Promise<number> {
  let dispatched = 0;
  const channels = dispatch.options.channels.map((channel) => channel.channel);
  const open = await findOpenBreakers(dispatch.options.db);
  if (dispatch.breakerGauge) exportBreakers(dispatch.breakerGauge, channels, open);
  const waiting = await channelsWithWaiting(dispatch.options.db, channels);
  if (open.length && waiting.size) await expireWaiting(dispatch, open);
  for (const channel of dispatch.options.channels) dispatched += await dispatchChannel(dispatch, channel, open, waiting.has(channel.channel));
  return dispatched;
}

/**
 * The delivery engine's dispatcher: the only way accepted messages reach Temporal. The outbox (Postgres) is
 * the queue; each round it hands Temporal no more than each channel's in-flight bound (what the provider
 * takes within a short lead time), picked fairly between workspaces and most urgent kind first, so a
 * million-message backlog costs Temporal nothing until the provider can take it, and never delays another
 * workspace's password reset. Safe on every worker: an advisory lock lets one claim at a time per channel
 * and class, and a workflow id never starts twice.
 */
export function runDispatcher(options: DispatcherOptions): OutboxLoop {
  const dispatch: Dispatch = {
    options,
    breaker: options.breaker ?? DEFAULT_BREAKER,
    breakerGauge: options.registry && createBreakerGauge(options.registry),
    lastSweep: 0,
    down: new Set(),
    closedAt: new Map(),
    gathering: new Map(),
  };
  return runOutboxLoop({
    name: 'dispatcher',
    logger: options.logger,
    intervalMs: options.intervalMs,
    // Something was handed over: there may be room for more at once (a round is bounded by capacity).
    round: async () => {
      const dispatched = await dispatchRound(dispatch);
      if (dispatched) options.logger.debug({ dispatched }, 'dispatcher: workflows started');
      return dispatched;
    },
  });
}
