import { randomUUID } from 'node:crypto';
import { hostname } from 'node:os';
import type { Logger } from 'pino';
import type { Sequelize } from 'sequelize';
import { WORKER_BEAT_INTERVAL_MS, WORKER_FORGOTTEN_AFTER_MS } from '../core/worker-registry';
import { beatWorker, forgetDeadWorkers, removeWorker } from '../db/repositories/worker-registry';

/**
 * This worker's row in the registry of live workers (migration 0035): a heartbeat every few seconds, from
 * which every worker knows how many share the provider rates when Redis is away (activities/pacing.ts).
 * Each beat also deletes the rows of workers that stopped beating a minute ago; a clean stop deletes its own.
 */
export function runWorkerRegistry(options: { db: Sequelize; logger: Logger; intervalMs?: number }): { id: string; stop: () => Promise<void> } {
  const worker = { id: randomUUID(), host: hostname(), pid: process.pid };
  let running = true;
  let wake = () => {};
  const loop = (async () => {
    while (running) {
      try {
        await beatWorker(options.db, worker);
        await forgetDeadWorkers(options.db, WORKER_FORGOTTEN_AFTER_MS);
      } catch (err) {
        options.logger.warn({ err }, 'worker registry: heartbeat failed; retrying');
      }
      await new Promise<void>((resolve) => {
        wake = resolve;
        setTimeout(resolve, options.intervalMs ?? WORKER_BEAT_INTERVAL_MS).unref();
      });
    }
  })();
  return {
    id: worker.id,
    stop: async () => {
      running = false;
      wake();
      await loop;
      await removeWorker(options.db, worker.id).catch(() => undefined);
    },
  };
}
