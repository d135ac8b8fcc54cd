import type { Request, RequestHandler, Response } from 'express';
import type { Redis } from 'ioredis';
import { RateLimiterMemory, RateLimiterRedis, RateLimiterRes } from 'rate-limiter-flexible';
import { clientKeyOf } from '../../core/client-address';
import type { Config } from '../../core/config';
import { AppError } from '../../core/errors';
import { tellLimit } from './rate-limit-headers';

export interface ClientAllowance {
  allowed: boolean;
  /** Seconds until the client may try again (0 when allowed). */
  retryAfter: number;
}

const WINDOW_SECONDS = 60;

const secondsOf = (state: RateLimiterRes): number => Math.max(1, Math.ceil(state.msBeforeNext / 1000));

/**
 * A per-client-address limit of the routes nobody signs in to (tracking, unsubscribe, provider callbacks,
 * the docs) and of failed key lookups. The client is `req.ip`, so behind a load balancer `TRUST_PROXY`
 * must name it, or every request counts as the balancer's. Counted in Redis over one-minute windows, so
 * every replica shares the count; per process while Redis is unreachable (never failing the request).
 */
export class ClientLimit {
  private readonly limiter: RateLimiterRedis;

  constructor(
    redis: Redis,
    name: string,
    readonly perMinute: number,
  ) {
    this.limiter = new RateLimiterRedis({
      storeClient: redis,
      keyPrefix: `rl:ip:${name}`,
      points: perMinute,
      duration: WINDOW_SECONDS,
      insuranceLimiter: new RateLimiterMemory({ keyPrefix: `rl:ip:${name}:local`, points: perMinute, duration: WINDOW_SECONDS }),
    });
  }

  /** Counts one request of the client; whether it was within the limit. */
  async take(req: Request): Promise<ClientAllowance> {
    try {
      await this.limiter.consume(clientKeyOf(req.ip));
      return { allowed: true, retryAfter: 0 };
    } catch (rejection) {
      if (!(rejection instanceof RateLimiterRes)) throw rejection;
      return { allowed: false, retryAfter: secondsOf(rejection) };
    }
  }

  /** Whether the client has already used up its allowance, without counting this request. */
  async exhausted(req: Request): Promise<ClientAllowance> {
    const state = await this.limiter.get(clientKeyOf(req.ip)).catch(() => null);
    return state && state.consumedPoints >= this.perMinute ? { allowed: false, retryAfter: secondsOf(state) } : { allowed: true, retryAfter: 0 };
  }

  /**
   * Writes the rate-limit headers of this client's allowance, without counting the request: what a 401 carries,
   * since a request without a valid key has no key's window to tell.
   */
  async tell(req: Request, res: Response): Promise<void> {
    const state = await this.limiter.get(clientKeyOf(req.ip)).catch(() => null);
    const used = state?.consumedPoints ?? 0;
    tellLimit(res, { limit: this.perMinute, remaining: Math.max(0, this.perMinute - used), resetSeconds: state ? secondsOf(state) : WINDOW_SECONDS });
  }

  /** Past the limit: 429 with Retry-After and the API's rate-limit body, before the route reads anything. */
  readonly middleware: RequestHandler = async (req, res, next) => {
    const outcome = await this.take(req);
    if (!outcome.allowed) refuseClient(res, this.perMinute, outcome.retryAfter);
    next();
  };
}

export function refuseClient(res: Response, limit: number, retryAfter: number): never {
  res.setHeader('Retry-After', String(retryAfter));
  throw new AppError('rate_limit_exceeded', 'Too many requests from this address', { limit, retryAfter });
}

/** The limits of the public edge, one per kind of route, from the configuration (README, Configuration). */
export interface ClientLimits {
  unsubscribe: ClientLimit;
  callbacks: ClientLimit;
  docs: ClientLimit;
  /** Lookups of well-formed API keys that exist nowhere (api/http/auth.ts). */
  unknownKeys: ClientLimit;
}

export function clientLimits(redis: Redis, config: Config): ClientLimits {
  return {
    unsubscribe: new ClientLimit(redis, 'unsubscribe', config.UNSUBSCRIBE_PER_IP_PER_MINUTE),
    callbacks: new ClientLimit(redis, 'callbacks', config.CALLBACKS_PER_IP_PER_MINUTE),
    docs: new ClientLimit(redis, 'docs', config.DOCS_PER_IP_PER_MINUTE),
    unknownKeys: new ClientLimit(redis, 'unknown-keys', config.UNKNOWN_KEYS_PER_IP_PER_MINUTE),
  };
}
