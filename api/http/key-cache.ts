import { LRUCache } from 'lru-cache';
import type { KeyOwner } from '../../db/repositories/api-keys';

export interface KeyCacheOptions {
  /** Keys that exist, kept at most this many (least recently used go first). */
  maxFound: number;
  /** Keys found nowhere, kept apart and at most this many. */
  maxMissing: number;
  /** How long a key found nowhere is remembered as such. */
  missingTtlMs: number;
}

const DEFAULTS: KeyCacheOptions = { maxFound: 50_000, maxMissing: 10_000, missingTtlMs: 30_000 };

/**
 * Looked-up API keys by hash, in process. Keys that exist and keys found nowhere live in two caches, so a
 * flood of made-up keys fills only the second (bounded, short-lived) and never pushes a real key out of
 * the first; a repeated made-up key costs no database read. Remembering a miss is safe: a key is random
 * and shown once at creation, so nobody sends it before it exists unless they guessed it. Revocations
 * evict at once (db/key-revocations.ts); concurrent lookups of one hash share one read.
 */
export class KeyCache {
  private readonly found: LRUCache<string, KeyOwner>;
  private readonly missing: LRUCache<string, true>;
  private readonly loading = new Map<string, Promise<KeyOwner | null>>();

  constructor(
    private readonly lookup: (hash: string) => Promise<KeyOwner | null>,
    ttlMs: number,
    options: Partial<KeyCacheOptions> = {},
  ) {
    const { maxFound, maxMissing, missingTtlMs } = { ...DEFAULTS, ...options };
    this.found = new LRUCache({ max: maxFound, ttl: Math.max(ttlMs, 1), ttlAutopurge: false });
    this.missing = new LRUCache({ max: maxMissing, ttl: Math.max(missingTtlMs, 1), ttlAutopurge: false });
  }

  /** What is cached for the hash: its owner, null when known to be no key, undefined when not cached. */
  peek(hash: string): KeyOwner | null | undefined {
    return this.found.get(hash) ?? (this.missing.has(hash) ? null : undefined);
  }

  async ownerOf(hash: string): Promise<KeyOwner | null> {
    const cached = this.peek(hash);
    if (cached !== undefined) return cached;
    let pending = this.loading.get(hash);
    if (!pending) {
      pending = this.lookup(hash)
        .then((owner) => {
          if (owner) this.found.set(hash, owner);
          else this.missing.set(hash, true);
          return owner;
        })
        .finally(() => this.loading.delete(hash));
      this.loading.set(hash, pending);
    }
    return pending;
  }

  /** Forgets a key known to have changed (revoked). */
  evict(hash: string): void {
    this.found.delete(hash);
    this.missing.delete(hash);
  }

  /** Keys held in each cache (tests and metrics). */
  get size(): { found: number; missing: number } {
    return { found: this.found.size, missing: this.missing.size };
  }
}
