import { randomUUID } from 'node:crypto';
import { KeyCache } from '../../api/http/key-cache';
import type { KeyOwner } from '../../db/repositories/api-keys';

describe('the API key cache', () => {
  const owner: KeyOwner = { keyId: randomUUID(), workspaceId: randomUUID(), scopes: ['*'], plan: 'free' };

  /** A cache over a key table holding one key, counting the lookups each hash costs. */
  function cacheOver(options: ConstructorParameters<typeof KeyCache>[2] = {}) {
    const lookups = new Map<string, number>();
    const cache = new KeyCache(async (hash) => {
      lookups.set(hash, (lookups.get(hash) ?? 0) + 1);
      return hash === 'valid' ? owner : null;
    }, 60_000, { maxFound: 10, maxMissing: 10, ...options });
    return { cache, lookups };
  }

  it('a flood of made-up keys, far more than the cache holds, does not evict a valid key', async () => {
    const { cache, lookups } = cacheOver();
    expect(await cache.ownerOf('valid')).toEqual(owner);
    for (let i = 0; i < 1_000; i += 1) expect(await cache.ownerOf(`made-up-${i}`)).toBeNull();
    expect(await cache.ownerOf('valid')).toEqual(owner);
    expect(lookups.get('valid')).toBe(1);
    expect(cache.size).toEqual({ found: 1, missing: 10 });
  });

  it('a repeated made-up key is looked up once, also when asked many times at once', async () => {
    const { cache, lookups } = cacheOver();
    await Promise.all(Array.from({ length: 50 }, () => cache.ownerOf('made-up')));
    expect(await cache.ownerOf('made-up')).toBeNull();
    expect(cache.peek('made-up')).toBeNull();
    expect(lookups.get('made-up')).toBe(1);
  });

  it('a miss is forgotten after its own TTL, and a revoked key is forgotten at once', async () => {
    const { cache, lookups } = cacheOver({ missingTtlMs: 20 });
    await cache.ownerOf('made-up');
    await new Promise((resolve) => setTimeout(resolve, 40));
    expect(cache.peek('made-up')).toBeUndefined();
    await cache.ownerOf('made-up');
    expect(lookups.get('made-up')).toBe(2);

    await cache.ownerOf('valid');
    cache.evict('valid');
    expect(cache.peek('valid')).toBeUndefined();
  });
});
