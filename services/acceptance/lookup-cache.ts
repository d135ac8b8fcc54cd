import { LRUCache } from 'lru-cache';

/**
 * Remembers lookups for a short while, misses included (a client retrying a bad value should not reach
 * the database each time). Each process has its own; `evict` drops an entry known to have changed.
 */
export class LookupCache<V> {
  private readonly entries: LRUCache<string, { value: V }>;

  constructor(
    private readonly lookup: (key: string) => Promise<V>,
    ttlMs: number,
    max = 50_000,
  ) {
    this.entries = new LRUCache({ max, ttl: Math.max(ttlMs, 1), ttlAutopurge: false });
  }

  async get(key: string): Promise<V> {
    const cached = this.entries.get(key);
    if (cached) return cached.value;
    const value = await this.lookup(key);
    this.entries.set(key, { value });
    return value;
  }

  evict(key: string): void {
    this.entries.delete(key);
  }
}
