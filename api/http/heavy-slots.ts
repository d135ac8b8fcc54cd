import type { RequestHandler } from 'express';
import type { Redis } from 'ioredis';
import type { Logger } from 'pino';
import { Semaphore } from 'redis-semaphore';
import { AppError } from '../../core/errors';
import { principalOf } from './auth';

export interface HeavySlotOptions {
  /** Heavy requests of one workspace running at once, across every API replica. */
  perWorkspace: number;
  /** A slot's lease: renewed while its request runs, so only a crashed process's slots wait it out. */
  leaseMs: number;
  logger?: Pick<Logger, 'warn'>;
}

/** No slot may be free soon, and nothing tells when: a second is the shortest honest wait. */
const RETRY_AFTER_SECONDS = 1;

/**
 * Per-workspace slots of heavy work (audience queries, exports, imports, syncs, renders), held from just
 * before the handler until the response is finished or its connection closes. A request past the workspace's
 * slots is refused with 429 and Retry-After at once rather than queued: a queue would hold sockets and
 * memory for a caller that is already flooding, and the slot is what keeps its work off everyone's database.
 * The slots are a Redis sorted set of leases (redis-semaphore); while Redis is unreachable a per-process
 * count stands in, as the rate limiter's does.
 */
export function heavySlots(redis: Redis, options: HeavySlotOptions): RequestHandler {
  const local = new Map<string, number>();

  async function take(workspaceId: string): Promise<(() => Promise<void>) | null> {
    const semaphore = new Semaphore(redis, `heavy:${workspaceId}`, options.perWorkspace, {
      lockTimeout: options.leaseMs,
      acquireAttemptsLimit: 1,
      retryInterval: 0,
      // The lease could not be renewed (Redis away longer than a lease): the request finishes anyway.
      onLockLost: (err) => options.logger?.warn({ err, workspaceId }, 'heavy work slot lost before the request finished'),
    });
    let acquired: boolean;
    try {
      acquired = await semaphore.tryAcquire();
    } catch (err) {
      options.logger?.warn({ err }, 'Redis unreachable; heavy work slots count per process');
      return takeLocally(workspaceId);
    }
    if (!acquired) return null;
    return () => semaphore.release().catch((err: unknown) => options.logger?.warn({ err }, 'heavy work slot not released; its lease frees it'));
  }

  function takeLocally(workspaceId: string): (() => Promise<void>) | null {
    const held = local.get(workspaceId) ?? 0;
    if (held >= options.perWorkspace) return null;
    local.set(workspaceId, held + 1);
    return async () => {
      const left = (local.get(workspaceId) ?? 1) - 1;
      if (left > 0) local.set(workspaceId, left);
      else local.delete(workspaceId);
    };
  }

  return async (_req, res, next) => {
    const release = await take(principalOf(res).workspaceId);
    if (!release) {
      res.setHeader('Retry-After', String(RETRY_AFTER_SECONDS));
      throw new AppError('rate_limit_exceeded', `This workspace already runs ${options.perWorkspace} heavy requests (previews, estimates, exports, imports, syncs, renders); try again when one finishes`, {
        limit: options.perWorkspace,
        retryAfter: RETRY_AFTER_SECONDS,
      });
    }
    let released = false;
    const done = () => {
      if (released) return;
      released = true;
      void release();
    };
    // 'close' fires for a finished response and for a client that went away alike.
    res.once('close', done);
    next();
  };
}
