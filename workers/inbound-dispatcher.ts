import type { Client } from '@temporalio/client';
import type { Logger } from 'pino';
import type { Sequelize } from 'sequelize';
import { inLanes } from '../core/lanes';
import { claimUnstartedInbound, markInboundStarted } from '../db/repositories/inbound-outbox';
import { withDeadline } from '../temporal/deadline';
import { startInboundMailWorkflow } from '../temporal/inbound';

export interface InboundDispatcherOptions {
  db: Sequelize;
  client: Client;
  taskQueuePrefix: string;
  logger: Logger;
  /** Time between rounds when nothing was waiting. */
  intervalMs: number;
  /** Rows younger than this are still being started by the listener's own hand-off. */
  olderThanMs?: number;
}

/** Starts per round: a round holds its rows' locks while it starts them, so it stays short. */
const ROUND_LIMIT = 200;
const CONCURRENT_STARTS = 16;
/** How long one round may wait on Temporal before its rows are left to the next. */
const ROUND_DEADLINE_MS = 20_000;
const DEFAULT_OLDER_THAN_MS = 5_000;

/**
 * The inbound-mail workflow's outbox drain. The listener starts each accepted message's workflow right after
 * its 250; when that start failed (Temporal away, the process killed between the commit and the start) the
 * row stays `received` without `workflow_started_at`, and this loop starts it a few seconds later. Safe on
 * every worker: rows are claimed with SKIP LOCKED inside the round's transaction, and a workflow id never
 * starts twice.
 */
export function runInboundDispatcher(options: InboundDispatcherOptions): { stop: () => Promise<void> } {
  let running = true;
  const olderThanMs = options.olderThanMs ?? DEFAULT_OLDER_THAN_MS;

  const round = () =>
    options.db.transaction(async (transaction) => {
      const claimed = await claimUnstartedInbound(options.db, { olderThan: new Date(Date.now() - olderThanMs), limit: ROUND_LIMIT }, transaction);
      const started: string[] = [];
      await withDeadline(options.client, ROUND_DEADLINE_MS, () =>
        inLanes(claimed, CONCURRENT_STARTS, async (message) => {
          try {
            await startInboundMailWorkflow(options.client, options.taskQueuePrefix, { workspaceId: message.workspaceId, inboxMessageId: message.id });
            started.push(message.id);
          } catch (err) {
            options.logger.warn({ err, inboxMessageId: message.id, workspaceId: message.workspaceId }, 'inbound dispatcher: workflow start failed; retried next round');
          }
        }));
      await markInboundStarted(options.db, started, transaction);
      return started.length;
    });

  const loop = (async () => {
    while (running) {
      let started = 0;
      try {
        started = await round();
        if (started) options.logger.info({ started }, 'inbound dispatcher: started workflows the hand-off missed');
      } catch (err) {
        options.logger.warn({ err }, 'inbound dispatcher: round failed; retrying');
      }
      if (started < ROUND_LIMIT) await new Promise((resolve) => setTimeout(resolve, options.intervalMs));
    }
  })();
  return {
    stop: async () => {
      running = false;
      await loop;
    },
  };
}
