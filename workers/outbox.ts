import type { Client } from '@temporalio/client';
import type { Logger } from 'pino';
import type { Sequelize } from 'sequelize';
import { startSendWorkflow } from '../api/emails/dispatch';
import { drainOutbox } from '../db/repositories/message-outbox';

export interface OutboxOptions {
  enabled: boolean;
  db: Sequelize;
  client: Client;
  taskQueuePrefix: string;
  logger: Logger;
  /** Rows younger than this are left to the API's own start (0 when the API does not start them). */
  minAgeMs: number;
  intervalMs: number;
}

/**
 * How often the loop runs and how old a row must be before it takes it. With `outbox` dispatch it is the
 * only starter, so it takes new rows at once, often; with `inline` the API starts fresh messages itself and
 * the loop only picks up, after a while, what it could not.
 */
export function outboxTiming(dispatch: 'inline' | 'outbox'): Pick<OutboxOptions, 'minAgeMs' | 'intervalMs'> {
  return dispatch === 'inline' ? { minAgeMs: 5_000, intervalMs: 2_000 } : { minAgeMs: 0, intervalMs: 100 };
}

const BATCH = 500;
const CONCURRENT_STARTS = 50;
/** Long enough for a round of starts; a drainer that dies mid-round frees its rows after this. */
const LEASE_MS = 30_000;

/**
 * Starts the send workflow of accepted messages that have none yet: after Temporal was down, after a
 * crash between commit and start, or for every message when the API runs in outbox mode.
 */
export function runOutbox(options: OutboxOptions): { stop: () => Promise<void> } {
  let running = options.enabled;
  const startAll = async (messages: Array<{ workspaceId: string; messageId: string }>) => {
    const started: string[] = [];
    for (let i = 0; i < messages.length; i += CONCURRENT_STARTS) {
      const slice = messages.slice(i, i + CONCURRENT_STARTS);
      const results = await Promise.allSettled(slice.map((message) => startSendWorkflow(options.client, options.taskQueuePrefix, message)));
      results.forEach((result, index) => {
        if (result.status === 'fulfilled') started.push(slice[index].messageId);
      });
      // Temporal refused everything: stop this round and try again later rather than spin.
      if (results.every((result) => result.status === 'rejected')) break;
    }
    return started;
  };
  const loop = (async () => {
    while (running) {
      let drained = 0;
      try {
        drained = await drainOutbox(options.db, { minAgeMs: options.minAgeMs, limit: BATCH, leaseMs: LEASE_MS }, startAll);
        if (drained) options.logger.debug({ drained }, 'outbox: send workflows started');
      } catch (err) {
        options.logger.warn({ err }, 'outbox: round failed; retrying');
      }
      // A full batch means more are waiting: go again at once.
      if (drained < BATCH) await new Promise((resolve) => setTimeout(resolve, options.intervalMs));
    }
  })();
  return {
    stop: async () => {
      running = false;
      await loop;
    },
  };
}
