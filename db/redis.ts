import { once } from 'node:events';
import { Redis } from 'ioredis';

const reconnect = (attempt: number) => Math.min(attempt * 200, 2_000);

/**
 * Redis holds hot counters and caches, never the only copy of anything. Commands fail fast instead of
 * queueing while Redis is unreachable, so a Redis outage degrades requests rather than hanging them.
 */
export function createRedis(url: string): Redis {
  return new Redis(url, {
    enableOfflineQueue: false,
    maxRetriesPerRequest: 1,
    commandTimeout: 500,
    connectTimeout: 2_000,
    retryStrategy: reconnect,
    // Commands issued in the same tick (the rate-limit checks of concurrent requests) share one write.
    enableAutoPipelining: true,
  });
}

/**
 * A connection for SUBSCRIBE, which cannot share a connection with ordinary commands. No ready check:
 * it sends INFO, which a connection already in subscriber mode refuses after a reconnect.
 */
export function createSubscriber(url: string): Redis {
  return new Redis(url, { connectTimeout: 2_000, retryStrategy: reconnect, enableReadyCheck: false });
}

/** Waits for the connection, at most `timeoutMs`; false when Redis did not answer in time. */
export async function redisReady(redis: Redis, timeoutMs: number): Promise<boolean> {
  if (redis.status === 'ready') return true;
  try {
    await once(redis, 'ready', { signal: AbortSignal.timeout(timeoutMs) });
    return true;
  } catch {
    return false;
  }
}

/** QUIT waits for a connection that may never come; an unconnected client is simply dropped. */
export async function closeRedis(redis: Redis): Promise<void> {
  if (redis.status === 'ready') await redis.quit().catch(() => redis.disconnect());
  else redis.disconnect();
}
