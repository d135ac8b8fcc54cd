import type { Redis } from 'ioredis';
import { createSubscriber } from './redis';

/**
 * A nudge from the API to the dispatchers that a transactional message was just accepted, over Redis
 * pub/sub: the dispatcher runs its next round at once instead of at the end of its back-off
 * (SEND_DISPATCH_INTERVAL_MS), which was half the time of a password reset at light load (docs/delivery.md).
 *
 * Only a hint: the outbox in Postgres stays the queue and the dispatcher still polls, so a lost nudge
 * (Redis away, a subscriber reconnecting) costs at most one interval, never a message. Why not Postgres'
 * NOTIFY inside the acceptance statement: a notifying commit takes a cluster-wide lock until it is flushed,
 * which would serialize every acceptance behind the one before it.
 */
const channelOf = (prefix: string) => `${prefix}outbox:wake`;

/**
 * A publisher that keeps one PUBLISH in flight at a time: a burst of acceptances costs Redis one message
 * per round trip, not one per message, and the dispatcher needs no more than one nudge per round.
 */
export function outboxWakePublisher(redis: Redis, prefix: string): () => void {
  let inFlight = false;
  let again = false;
  const publish = (): void => {
    inFlight = true;
    again = false;
    redis.publish(channelOf(prefix), '').catch(() => undefined).finally(() => {
      inFlight = false;
      if (again) publish();
    });
  };
  return () => {
    if (inFlight) again = true;
    else publish();
  };
}

/**
 * Calls `onWake` for every nudge, on a connection of its own (a subscribed connection can do nothing else).
 * Answers the unsubscribe. The connection retries on its own while Redis is away, and ioredis subscribes
 * again when it is back (autoResubscribe).
 */
export function subscribeOutboxWake(redisUrl: string, prefix: string, onWake: () => void): () => void {
  const subscriber = createSubscriber(redisUrl);
  subscriber.on('error', () => undefined);
  subscriber.on('message', onWake);
  // Not awaited: a Redis that is away at start-up must not keep the worker from starting (polling carries on);
  // the subscriber queues the command until it connects.
  subscriber.subscribe(channelOf(prefix)).catch(() => undefined);
  return () => subscriber.disconnect();
}
