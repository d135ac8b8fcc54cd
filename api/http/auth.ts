import type { RequestHandler, Response } from 'express';
import { bearerToken, hashApiKey, looksLikeApiKey } from '../../core/api-keys';
import { AppError } from '../../core/errors';
import type { KeyOwner } from '../../db/repositories/api-keys';
import { type ClientLimit, refuseClient } from './client-limits';
import type { KeyCache } from './key-cache';

export type Principal = KeyOwner;

/**
 * `unknownKeys` counts, per client address, keys that match no key: past its limit a client's next key
 * that is not already cached answers 429 before any lookup, so guessing keys costs us no database reads.
 * A 401 carries its rate-limit headers, the limit that applies to a request without a valid key (which has
 * no key's window to tell).
 */
export function authenticate(cache: KeyCache, unknownKeys?: ClientLimit): RequestHandler {
  return async (req, res, next) => {
    const token = bearerToken(req.header('authorization'));
    if (!token || !looksLikeApiKey(token)) {
      await unknownKeys?.tell(req, res);
      throw new AppError('unauthorized', 'Missing or invalid API key: send Authorization: Bearer sk_...');
    }
    const hash = hashApiKey(token);
    let owner = cache.peek(hash);
    if (owner === undefined && unknownKeys) {
      const allowance = await unknownKeys.exhausted(req);
      if (!allowance.allowed) refuseClient(res, unknownKeys.perMinute, allowance.retryAfter);
    }
    owner ??= await cache.ownerOf(hash);
    if (!owner) {
      await unknownKeys?.take(req);
      await unknownKeys?.tell(req, res);
      throw new AppError('unauthorized', 'Invalid or revoked API key');
    }
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
