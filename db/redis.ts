import { Redis } from 'ioredis';

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
    retryStrategy: (attempt) => Math.min(attempt * 200, 2_000),
  });
}

/**
 * A connection that queues commands until it is connected: for SUBSCRIBE (which cannot share a
 * connection with ordinary commands) and for short-lived scripts that publish once and exit.
 */
export function createQueueingRedis(url: string): Redis {
  return new Redis(url, { connectTimeout: 2_000, retryStrategy: (attempt) => Math.min(attempt * 200, 2_000) });
}
