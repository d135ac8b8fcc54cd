import type { Request, RequestHandler, Response } from 'express';
import type { Redis } from 'ioredis';
import { RateLimiterMemory, RateLimiterRedis, RateLimiterRes } from 'rate-limiter-flexible';
import { AppError, isAppError } from '../../core/errors';
import { type CostPoints, type LimitState, pointsFor, type RouteCost, tighterOf, workspaceState } from '../../core/request-costs';
import { principalOf } from './auth';
import { tellLimit } from './rate-limit-headers';

/**
 * A limiter over one-second windows, counted in Redis so every API replica shares it. When Redis is
 * unreachable it falls back to a per-process count instead of failing or hanging.
 */
function limiter(redis: Redis, keyPrefix: string, points: number): RateLimiterRedis {
  return new RateLimiterRedis({
    storeClient: redis,
    keyPrefix,
    points,
    duration: 1,
    insuranceLimiter: new RateLimiterMemory({ keyPrefix: `${keyPrefix}:local`, points, duration: 1 }),
  });
}

async function spend(from: RateLimiterRedis, key: string, points: number): Promise<{ outcome: RateLimiterRes; allowed: boolean }> {
  try {
    return { outcome: await from.consume(key, points), allowed: true };
  } catch (rejection) {
    if (!(rejection instanceof RateLimiterRes)) throw rejection;
    return { outcome: rejection, allowed: false };
  }
}

const resetOf = (outcome: RateLimiterRes) => Math.max(1, Math.ceil(outcome.msBeforeNext / 1000));

function tell(res: Response, state: LimitState): void {
  tellLimit(res, state);
  res.locals.rateLimit = state;
}

function refuse(res: Response, state: LimitState): never {
  res.setHeader('Retry-After', String(state.resetSeconds));
  throw new AppError('rate_limit_exceeded', 'Rate limit exceeded', { limit: state.limit, retryAfter: state.resetSeconds });
}

/** Counts one request of a key and writes the headers; past the limit, 429. */
export type KeyCount = (res: Response, keyId: string) => Promise<void>;

/** The spec's limit: requests per second per key, every route alike (and every answer, 404 and 405 included). */
export function keyLimit(redis: Redis, perSecond: number): KeyCount {
  const perKey = limiter(redis, 'rl:key', perSecond);
  return async (res, keyId) => {
    const { outcome, allowed } = await spend(perKey, keyId, 1);
    const state = { limit: perSecond, remaining: Math.max(0, outcome.remainingPoints), resetSeconds: resetOf(outcome) };
    tell(res, state);
    if (!allowed) refuse(res, state);
  };
}

export function rateLimitPerKey(count: KeyCount): RequestHandler {
  return async (_req, res, next) => {
    await count(res, principalOf(res).keyId);
    next();
  };
}

/**
 * The headers of a request no route takes (an unknown path's 404, a method's 405), whose status stays what it
 * is: with a valid key the request counts against the key like any other; without one, authentication's
 * failure has already written the per-address headers of unknown keys (api/http/auth.ts).
 */
export function unroutedLimitHeaders(authenticate: RequestHandler, count: KeyCount): (req: Request, res: Response) => Promise<void> {
  return async (req, res) => {
    try {
      await authenticate(req, res, () => undefined);
    } catch (error) {
      if (isAppError(error) && error.code === 'unauthorized') return;
      throw error;
    }
    await count(res, principalOf(res).keyId);
  };
}

/**
 * A workspace's keys together, in points a second, each route spending its declared cost: more keys do not
 * buy a workspace more of the shared database, and a preview spends what it costs, not what a read does.
 * Runs after the per-key limit; the headers then tell whichever of the two is closer to refusing.
 */
export function rateLimitPerWorkspace(redis: Redis, perSecond: number, costs: CostPoints): (cost: RouteCost) => RequestHandler {
  const perWorkspace = limiter(redis, 'rl:ws', perSecond);
  return (cost) => {
    const points = pointsFor(cost, costs);
    return async (_req, res, next) => {
      const { outcome, allowed } = await spend(perWorkspace, principalOf(res).workspaceId, points);
      const state = workspaceState({ limit: perSecond, remaining: outcome.remainingPoints }, points, resetOf(outcome));
      const keyState = res.locals.rateLimit as LimitState | undefined;
      if (!allowed) {
        tell(res, { ...state, remaining: 0 });
        refuse(res, state);
      }
      tell(res, keyState ? tighterOf(keyState, state) : state);
      next();
    };
  };
}
