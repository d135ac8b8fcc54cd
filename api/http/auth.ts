import type { RequestHandler, Response } from 'express';
import { bearerToken, hashApiKey, looksLikeApiKey } from '../../core/api-keys';
import { AppError } from '../../core/errors';
import type { KeyOwner } from '../../db/repositories/api-keys';
import { LookupCache } from './lookup-cache';

export type Principal = KeyOwner;

/** Looked-up API keys by hash; unknown keys are remembered too. Revocations evict at once (key-revocations). */
export class KeyCache extends LookupCache<KeyOwner | null> {
  ownerOf(hash: string): Promise<KeyOwner | null> {
    return this.get(hash);
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
