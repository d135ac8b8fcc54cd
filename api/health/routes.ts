import type { Connection } from '@temporalio/client';
import type { Request, Router } from 'express';
import type { Redis } from 'ioredis';
import type { Sequelize } from 'sequelize';
import { withDeadline } from '../../temporal/deadline';

export interface ReadinessDeps {
  db: Sequelize;
  redis: Redis;
  temporal: Connection;
  /** Only operators see which dependency failed and how: the messages name hosts and ports. */
  isOperator: (req: Request) => boolean;
}

const CHECK_TIMEOUT_MS = 1_500;

function withTimeout<T>(work: Promise<T>, ms: number): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`no answer within ${ms} ms`)), ms);
  });
  return Promise.race([work, timeout]).finally(() => clearTimeout(timer));
}

async function check(work: () => Promise<unknown>): Promise<string> {
  try {
    await withTimeout(work(), CHECK_TIMEOUT_MS);
    return 'ok';
  } catch (error) {
    return error instanceof Error ? error.message : String(error);
  }
}

/**
 * `/healthz`: the process is alive. `/readyz`: it can reach everything a request needs (200 or 503);
 * with the operator token, also what each dependency answered.
 */
export function healthRoutes(router: Router, deps: ReadinessDeps): void {
  router.get('/healthz', (_req, res) => {
    res.json({ status: 'ok' });
  });

  router.get('/readyz', async (req, res) => {
    const [postgres, redis, temporal] = await Promise.all([
      check(() => deps.db.query('SELECT 1')),
      check(() => deps.redis.ping()),
      // A gRPC deadline, not just a race: it also stops the client's own retries of the call.
      check(() =>
        withDeadline(deps.temporal, CHECK_TIMEOUT_MS, () => deps.temporal.workflowService.getSystemInfo({})),
      ),
    ]);
    const checks = { postgres, redis, temporal };
    const ready = Object.values(checks).every((state) => state === 'ok');
    const status = ready ? 'ready' : 'unavailable';
    res.status(ready ? 200 : 503).json(deps.isOperator(req) ? { status, checks } : { status });
  });
}
