import { createHash } from 'node:crypto';
import type { Request } from 'express';
import type { Redis } from 'ioredis';
import type { ClientLimit } from '../http/client-limits';

/** Decides whether a genuine pixel or click hit is stored; it is answered either way. */
export interface HitGate {
  admit: (req: Request, token: string) => Promise<boolean>;
}

/**
 * Stores a hit only when its client is within the per-address limit and it is not a replay: the same
 * token, method, address and user agent again within `replayWindowMs` is answered and not stored again,
 * so a script replaying one link adds one event, while the person's own open an hour later still counts.
 * One SET NX with an expiry in Redis, shared by every replica; while Redis is unreachable hits are stored
 * (the limit still counts per process), because losing real opens is worse than a few repeats.
 */
export function createHitGate(deps: { redis: Redis; limit: ClientLimit; replayWindowMs: number }): HitGate {
  async function firstSeen(req: Request, token: string): Promise<boolean> {
    if (deps.replayWindowMs === 0) return true;
    const seen = createHash('sha256').update(`${token}\0${req.method}\0${req.ip ?? ''}\0${req.get('user-agent') ?? ''}`).digest('base64url');
    try {
      return (await deps.redis.set(`trk:seen:${seen}`, '1', 'PX', deps.replayWindowMs, 'NX')) === 'OK';
    } catch {
      return true;
    }
  }

  return {
    async admit(req, token) {
      // Both asked at once, so a hit costs one Redis round trip; a replay past the limit is not stored either way.
      const [allowance, first] = await Promise.all([deps.limit.take(req), firstSeen(req, token)]);
      return allowance.allowed && first;
    },
  };
}
