import { ApplicationFailure } from '@temporalio/activity';
import type { Redis } from 'ioredis';
import type { Config } from '../core/config';
import { createRedis, redisReady } from '../db/redis';
import type { Message } from '../db/repositories/messages';
import { type PaceLimit, SendPacer, SendPacerUnavailable } from '../db/send-pacer';

/**
 * How late a woken sender may still use its turn. A worker busy signing and building mail wakes tens of
 * milliseconds late; giving the turn up then loses it for good (the rate falls under 90% at 50/s in the
 * test stack). Allowing 50 ms keeps any 10 s window within floor((10 + 0.05) × rate) + 1 sends: 142 at the
 * default 14/s, against 141 for perfectly punctual senders.
 */
const LATENESS_MS = 50;

/** The longest an attempt waits for its turn; past it the turn is not taken and Temporal retries later. */
const MAX_WAIT_MS = 60_000;

/**
 * Pacing of provider calls, shared by every worker through Redis (db/send-pacer.ts): each message waits
 * for its slot under its provider's rate right before it is claimed and sent, so the rate holds over any
 * window, across all workers, for single sends and batches alike. The limits are per channel and
 * provider (`email:smtp`, `email:ses`); Telegram's per-chat limit joins the same reservation later.
 */
export function createEmailPacing(config: Config, redis?: Redis): { pace: (message: Message) => Promise<void>; close: () => Promise<void> } {
  let client = redis;
  let pacer: SendPacer | null = null;
  const limits: PaceLimit[] = [{ key: `email:${config.EMAIL_PROVIDER}`, ratePerSecond: config.SEND_RATE_PER_SECOND }];
  return {
    async pace() {
      if (!client) {
        client = createRedis(config.REDIS_URL);
        // The client fails fast while disconnected: give the first connection a moment.
        await redisReady(client, 2_000);
      }
      pacer ??= new SendPacer(client, { prefix: config.TASK_QUEUE_PREFIX, maxLatenessMs: LATENESS_MS });
      let turn;
      try {
        turn = await pacer.acquire(limits, { maxWaitMs: MAX_WAIT_MS });
      } catch (error) {
        // Never send unpaced: without Redis the attempt fails and Temporal retries it.
        if (error instanceof SendPacerUnavailable) throw ApplicationFailure.retryable(error.message, 'PacerUnavailable');
        throw error;
      }
      if (!turn.granted) {
        // A backlog longer than the wait: come back when a turn can be had, spread so retries do not collide.
        const jitter = Math.random() * 1_000;
        throw ApplicationFailure.create({ message: 'the provider rate is taken for the next minute', type: 'Throttled', nextRetryDelay: turn.retryAfterMs + jitter });
      }
    },
    close: async () => {
      if (client && client !== redis) client.disconnect();
    },
  };
}
