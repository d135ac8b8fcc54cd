import { ApplicationFailure } from '@temporalio/activity';
import type { Redis } from 'ioredis';
import { type Logger, pino } from 'pino';
import type { Registry } from 'prom-client';
import type { Sequelize } from 'sequelize';
import type { Config } from '../core/config';
import { WORKER_LIVE_FOR_MS } from '../core/worker-registry';
import { createRedis, redisReady } from '../db/redis';
import { countLiveWorkers } from '../db/repositories/worker-registry';
import { type PaceLimit, type Reservation, SendPacer, SendPacerUnavailable } from '../db/send-pacer';
import { LocalSendPacer } from '../db/send-pacer-local';
import { PacerFallback, type PacerFallbackDeps } from './pacer-fallback';

/**
 * How late a woken sender may still use its turn. A worker busy signing and building mail wakes tens of
 * milliseconds late; giving the turn up then loses it for good (the rate falls under 90% at 50/s in the
 * test stack). Allowing 50 ms keeps any 10 s window within floor((10 + 0.05) × rate) + 1 sends: 142 at the
 * default 14/s, against 141 for perfectly punctual senders.
 */
const LATENESS_MS = 50;

/** The longest an attempt waits for its turn (in either pacer); past it the turn is not taken and Temporal retries later. */
const MAX_WAIT_MS = 60_000;

/** The email provider's rate, across every worker and workspace (`email:smtp`, `email:ses`). */
export function emailPaceLimits(config: Pick<Config, 'EMAIL_PROVIDER' | 'SEND_RATE_PER_SECOND'>): PaceLimit[] {
  return [{ key: `email:${config.EMAIL_PROVIDER}`, ratePerSecond: config.SEND_RATE_PER_SECOND }];
}

/** Telegram's flood limits: about 30 messages a second per bot, and one a second per chat. */
export const TELEGRAM_BOT_RATE = 30;
export const TELEGRAM_CHAT_RATE = 1;

export function telegramPaceLimits(botId: number | string, chatId: string, botRate: number = TELEGRAM_BOT_RATE): PaceLimit[] {
  return [
    { key: `telegram:bot${botId}`, ratePerSecond: botRate },
    { key: `telegram:bot${botId}:chat${chatId}`, ratePerSecond: TELEGRAM_CHAT_RATE },
  ];
}

/** Twilio paces WhatsApp per sender number: each workspace's `whatsappFrom` at its own rate. */
export function whatsAppPaceLimits(sender: string, ratePerSecond: number): PaceLimit[] {
  return [{ key: `whatsapp:twilio:${sender}`, ratePerSecond }];
}

export interface PacingDeps {
  config: Config;
  /** The shared pacer's Redis; a connection to REDIS_URL, made on first use, when not given. */
  redis?: Redis;
  /** Where the worker registry counts live workers (the fallback's share). */
  db: Sequelize;
  logger?: Logger;
  metrics?: Registry;
  /** Shorter probe and share refresh (tests). */
  fallback?: Pick<PacerFallbackDeps, 'probeMs' | 'shareRefreshMs'>;
}

/**
 * Pacing of provider calls, shared by every worker through Redis (db/send-pacer.ts): each message waits
 * for one turn under all the limits its channel names (prepared with the message) right before it is sent,
 * so every rate holds over any window, across all workers, for single sends and batches alike.
 *
 * Redis unreachable: this worker paces on its own at its share of each rate (the rate ÷ live workers,
 * db/send-pacer-local.ts and pacer-fallback.ts) and sends go on; once Redis answers a probe again, the
 * shared pacer takes over (docs/delivery.md "When Redis is away").
 */
export function createPacing(deps: PacingDeps): { pace: (limits: readonly PaceLimit[]) => Promise<void>; close: () => Promise<void> } {
  const { config } = deps;
  let client = deps.redis;
  let pacer: SendPacer | null = null;
  const local = new LocalSendPacer({ maxLatenessMs: LATENESS_MS });
  const fallback = new PacerFallback({
    probe: async () => client?.ping(),
    liveWorkers: () => countLiveWorkers(deps.db, WORKER_LIVE_FOR_MS),
    logger: deps.logger ?? pino({ level: config.LOG_LEVEL }),
    metrics: deps.metrics,
    ...deps.fallback,
  });

  async function sharedTurn(limits: readonly PaceLimit[]): Promise<Reservation | null> {
    if (!client) {
      client = createRedis(config.REDIS_URL);
      // The client fails fast while disconnected: give the first connection a moment.
      await redisReady(client, 2_000);
    }
    pacer ??= new SendPacer(client, { prefix: config.TASK_QUEUE_PREFIX, maxLatenessMs: LATENESS_MS });
    try {
      return await pacer.acquire(limits, { maxWaitMs: MAX_WAIT_MS });
    } catch (error) {
      if (!(error instanceof SendPacerUnavailable)) throw error;
      await fallback.enter(error);
      return null;
    }
  }

  async function turnOf(limits: readonly PaceLimit[]): Promise<Reservation> {
    for (;;) {
      const shared = (await fallback.recovered()) ? await sharedTurn(limits) : null;
      if (shared) return shared;
      await fallback.refreshShare(false);
      // Null when Redis came back while this caller was queued: it takes its turn from the shared pacer.
      const turn = await local.acquire(limits, { share: () => fallback.share, maxWaitMs: MAX_WAIT_MS, abandon: () => !fallback.engaged });
      if (turn) return turn;
    }
  }

  return {
    async pace(limits) {
      const turn = await turnOf(limits);
      if (!turn.granted) {
        // A backlog longer than the wait: come back when a turn can be had, spread so retries do not collide.
        const jitter = Math.random() * 1_000;
        throw ApplicationFailure.create({ message: 'the provider rate is taken for the next minute', type: 'Throttled', nextRetryDelay: turn.retryAfterMs + jitter });
      }
    },
    close: async () => {
      if (client && client !== deps.redis) client.disconnect();
    },
  };
}
