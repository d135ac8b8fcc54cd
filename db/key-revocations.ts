import type { Redis } from 'ioredis';

/**
 * Every API replica caches looked-up keys for a few seconds. A revocation is published here so each
 * replica evicts the key at once; if the message is lost, the cache's TTL still bounds the delay.
 */
const CHANNEL = 'api-keys:revoked';

export async function publishKeyRevocation(redis: Redis, keyHash: string): Promise<void> {
  try {
    await redis.publish(CHANNEL, keyHash);
  } catch {
    // Redis down: the revocation is already durable in Postgres and caches expire on their own.
  }
}

export async function onKeyRevocation(
  subscriber: Redis,
  evict: (keyHash: string) => void,
  onError: (error: Error) => void = () => undefined,
): Promise<void> {
  // ioredis reconnects by itself; without a listener each connection error is reported as unhandled.
  subscriber.on('error', onError);
  subscriber.on('message', (channel: string, keyHash: string) => {
    if (channel === CHANNEL) evict(keyHash);
  });
  await subscriber.subscribe(CHANNEL);
}
