import type { RequestHandler } from 'express';
import type { Redis } from 'ioredis';
import { RateLimiterMemory, RateLimiterRedis, RateLimiterRes } from 'rate-limiter-flexible';
import { AppError } from '../../core/errors';
import { principalOf } from './auth';

/**
 * Per-key limit over one-second windows, counted in Redis so every API replica shares it. When Redis
 * is unreachable the limiter falls back to a per-process count instead of failing or hanging.
 */
export function rateLimitPerKey(redis: Redis, perSecond: number): RequestHandler {
  const limiter = new RateLimiterRedis({
    storeClient: redis,
    keyPrefix: 'rl:key',
    points: perSecond,
    duration: 1,
    insuranceLimiter: new RateLimiterMemory({ keyPrefix: 'rl:key:local', points: perSecond, duration: 1 }),
  });

  return async (_req, res, next) => {
    const { keyId } = principalOf(res);
    let outcome: RateLimiterRes;
    let allowed = true;
    try {
      outcome = await limiter.consume(keyId);
    } catch (rejection) {
      if (!(rejection instanceof RateLimiterRes)) throw rejection;
      outcome = rejection;
      allowed = false;
    }
    const resetSeconds = Math.max(1, Math.ceil(outcome.msBeforeNext / 1000));
    res.setHeader('RateLimit-Limit', String(perSecond));
    res.setHeader('RateLimit-Remaining', String(Math.max(0, outcome.remainingPoints)));
    res.setHeader('RateLimit-Reset', String(resetSeconds));
    if (!allowed) {
      res.setHeader('Retry-After', String(resetSeconds));
      throw new AppError('rate_limit_exceeded', 'Rate limit exceeded', { limit: perSecond, retryAfter: resetSeconds });
    }
    next();
  };
}
