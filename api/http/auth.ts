import type { RequestHandler, Response } from 'express';
import { LRUCache } from 'lru-cache';
import { bearerToken, hashApiKey, looksLikeApiKey } from '../../core/api-keys';
import { AppError } from '../../core/errors';
import type { KeyOwner } from '../../db/repositories/api-keys';

export type Principal = KeyOwner;

/** Looked-up keys stay in memory briefly; a miss is one indexed query. Revocations evict at once. */
export class KeyCache {
  private readonly entries: LRUCache<string, { owner: KeyOwner | null }>;

  constructor(
    private readonly lookup: (hash: string) => Promise<KeyOwner | null>,
    ttlMs: number,
  ) {
    this.entries = new LRUCache({ max: 50_000, ttl: Math.max(ttlMs, 1), ttlAutopurge: false });
  }

  async ownerOf(hash: string): Promise<KeyOwner | null> {
    const cached = this.entries.get(hash);
    if (cached) return cached.owner;
    const owner = await this.lookup(hash);
    // Unknown keys are remembered too, so a client retrying a bad key does not reach the database each time.
    this.entries.set(hash, { owner });
    return owner;
  }

  evict(hash: string): void {
    this.entries.delete(hash);
  }
}

export function authenticate(cache: KeyCache): RequestHandler {
  return async (req, res, next) => {
    const token = bearerToken(req.header('authorization'));
    if (!token || !looksLikeApiKey(token)) {
      throw new AppError('unauthorized', 'Missing or invalid API key: send Authorization: Bearer sk_...');
    }
    const owner = await cache.ownerOf(hashApiKey(token));
    if (!owner) throw new AppError('unauthorized', 'Invalid or revoked API key');
    res.locals.principal = owner;
    req.log = req.log.child({ workspaceId: owner.workspaceId, keyId: owner.keyId });
    next();
  };
}

export function principalOf(res: Response): Principal {
  const principal = res.locals.principal as Principal | undefined;
  if (!principal) throw new Error('principalOf called on a route without authentication');
  return principal;
}
