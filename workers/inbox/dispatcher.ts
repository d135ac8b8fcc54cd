import type { Client } from '@temporalio/client';
import type { Logger } from 'pino';
import type { Sequelize } from 'sequelize';
import { claimUnstartedInbound, markInboundStarted } from '../../db/repositories/inbox-outbox';
import { withDeadline } from '../../temporal/deadline';
import { startInboundMailWorkflow } from '../../temporal/inbound';
import { handOver, type OutboxLoop, runOutboxLoop } from '../outbox-loop';

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
export function runInboundDispatcher(options: InboundDispatcherOptions): OutboxLoop {
  const olderThanMs = options.olderThanMs ?? DEFAULT_OLDER_THAN_MS;
  return runOutboxLoop({
    name: 'inbound dispatcher',
    logger: options.logger,
    intervalMs: options.intervalMs,
    round: async () => {
      const started = await startMissedInbound(options, olderThanMs);
      if (started) options.logger.info({ started }, 'inbound dispatcher: started workflows the hand-off missed');
      return started;
    },
    // A full round means more may be waiting; a partial one drained what was old enough.
    more: (started) => started >= ROUND_LIMIT,
  });
}

/** One round: claims accepted rows older than `olderThanMs` whose workflow is not known to run, starts them, marks the started ones. */
export function startMissedInbound(options: InboundDispatcherOptions, olderThanMs: number): Promise<number> {
  return options.db.transaction(async (transaction) => {
    const claimed = await claimUnstartedInbound(options.db, { olderThan: new Date(Date.now() - olderThanMs), limit: ROUND_LIMIT }, transaction);
    const started = await withDeadline(options.client, ROUND_DEADLINE_MS, () =>
      handOver(claimed, CONCURRENT_STARTS, async (message) => {
        await startInboundMailWorkflow(options.client, options.taskQueuePrefix, { workspaceId: message.workspaceId, inboxMessageId: message.id });
      }, (err, message) => {
        options.logger.warn({ err, inboxMessageId: message.id, workspaceId: message.workspaceId }, 'inbound dispatcher: workflow start failed; retried next round');
      }));
    await markInboundStarted(options.db, started.map((message) => message.id), transaction);
    return started.length;
  });
}
