import { randomUUID } from 'node:crypto';
import { NativeConnection, type Worker } from '@temporalio/worker';
import { pino } from 'pino';
import type { Agent } from 'node:https';
import { QueryTypes } from 'sequelize';
import { type ActivityDeps, createActivities } from '../../activities';
import type { MessageStatus } from '../../db/repositories/messages';
import { createBulkWorker, createControlWorker, createDefaultWorker, createSendsWorker } from '../../workers/create-worker';
import { dispatcherBreaker, dispatcherChannels, runDispatcher } from '../../workers/dispatcher';
import { subscribeOutboxWake } from '../../db/outbox-wake';
import { runWebhookDispatcher } from '../../workers/webhook-dispatcher';
import { temporalPorts } from '../../temporal/activity-ports';
import { connectTemporal } from '../../temporal/connection';
import { createIsolatedDatabase } from './isolated-database';
import type { AppDeps } from '../../api/app';
import { type ApiHarness, startApi } from './api-harness';
import { startSmtpSink, type SmtpSink } from './smtp-sink';

export interface EmailStack {
  api: ApiHarness;
  sink: SmtpSink;
  /** Waits until the message reaches one of these statuses (or fails the test after a while). */
  waitForStatus: (workspaceId: string, messageId: string, statuses: MessageStatus[], timeoutMs?: number) => Promise<MessageStatus>;
  /** Starts the Temporal workers (control, default, sends); the provider rate is SEND_RATE_PER_SECOND (1,000 unless overridden). */
  startWorkers: () => Promise<void>;
  /** Stops the Temporal workers; the dispatcher goes on starting workflows, which then wait for a worker. */
  stopWorkers: () => Promise<void>;
  /** Starts the dispatchers: of messages, and of webhook deliveries. */
  startDispatcher: () => void;
  stopDispatcher: () => Promise<void>;
  close: () => Promise<void>;
}

/**
 * The whole send path in one test file, as shipped: the real API, the dispatcher, workers (control, default
 * and sends queues) on the test Temporal server under a task-queue prefix of the file's own, an SMTP sink
 * as the provider, and a database of the file's own (the dispatcher takes every message it finds).
 */
export async function startEmailStack(
  options: {
    snsAgent?: Agent;
    attachmentFetch?: AppDeps['attachmentFetch'];
    /** The webhook URL check's and calls' fetcher options (a resolver stand-in). */
    webhookFetch?: AppDeps['webhookFetch'];
    overrides?: Record<string, string>;
    /** The message dispatcher's back-off after a round that found nothing (50 ms unless given). */
    dispatchIntervalMs?: number;
    /** Extra activity dependencies (a metrics registry, a slowed step). */
    activities?: Omit<Partial<ActivityDeps>, 'db' | 'config'>;
  } = {},
): Promise<EmailStack> {
  const sink = await startSmtpSink();
  const prefix = `test-${randomUUID()}-`;
  const database = options.overrides?.DATABASE_URL ? null : await createIsolatedDatabase(process.env.DATABASE_URL ?? '');
  const api = await startApi(
    { TASK_QUEUE_PREFIX: prefix, SMTP_URL: sink.url, EMAIL_PROVIDER: 'smtp', SEND_RATE_PER_SECOND: '1000', ...(database && { DATABASE_URL: database.url }), ...options.overrides },
    { snsAgent: options.snsAgent, attachmentFetch: options.attachmentFetch, webhookFetch: options.webhookFetch },
  );
  const config = api.config;
  const connection = await NativeConnection.connect({ address: config.TEMPORAL_ADDRESS });
  const client = await connectTemporal(config);
  let running: Array<{ worker: Worker; done: Promise<void> }> = [];
  let dispatchers: Array<{ stop: () => Promise<void> }> = [];
  let unsubscribeWake: (() => void) | null = null;
  const intervalMs = options.dispatchIntervalMs ?? 50;

  const startDispatcher = () => {
    if (dispatchers.length) return;
    const logger = pino({ level: 'silent' });
    const messages = runDispatcher({ db: api.db, client, taskQueuePrefix: prefix, logger, channels: dispatcherChannels(config), intervalMs, breaker: dispatcherBreaker(config) });
    // As workers/main.ts does: the API's nudge after an acceptance starts the next round at once.
    unsubscribeWake = subscribeOutboxWake(config.REDIS_URL, prefix, messages.wake);
    dispatchers = [
      messages,
      runWebhookDispatcher({ db: api.db, client, taskQueuePrefix: prefix, logger, perEndpoint: config.WEBHOOK_IN_FLIGHT_PER_ENDPOINT, intervalMs: 50, sweepIntervalMs: config.WEBHOOK_SLOT_SWEEP_INTERVAL_MS }),
    ];
  };
  const stopDispatcher = async () => {
    unsubscribeWake?.();
    unsubscribeWake = null;
    await Promise.all(dispatchers.map((dispatcher) => dispatcher.stop()));
    dispatchers = [];
  };
  const startWorkers = async () => {
    const activities = createActivities({ db: api.db, config, temporal: temporalPorts(client, prefix), redis: api.redis, webhookFetch: options.webhookFetch, ...options.activities });
    const workerOptions = { connection, namespace: config.TEMPORAL_NAMESPACE, taskQueuePrefix: prefix, activities };
    const workers = [
      await createControlWorker(workerOptions),
      await createDefaultWorker(workerOptions),
      await createSendsWorker(workerOptions),
      await createBulkWorker(workerOptions, config.BULK_ACTIVITY_SLOTS),
    ];
    running = workers.map((worker) => ({ worker, done: worker.run() }));
  };
  const stopWorkers = async () => {
    for (const { worker } of running) worker.shutdown();
    await Promise.all(running.map(({ done }) => done));
    running = [];
  };
  await startWorkers();
  startDispatcher();

  return {
    api,
    sink,
    startWorkers,
    stopWorkers,
    startDispatcher,
    stopDispatcher,
    waitForStatus: async (workspaceId, messageId, statuses, timeoutMs = 30_000) => {
      let status: MessageStatus | undefined;
      for (const deadline = Date.now() + timeoutMs; Date.now() < deadline; ) {
        const rows = await api.db.query<{ status: MessageStatus }>('SELECT status FROM messages WHERE workspace_id = $1 AND id = $2', {
          bind: [workspaceId, messageId],
          type: QueryTypes.SELECT,
        });
        status = rows[0]?.status;
        if (status && statuses.includes(status)) return status;
        await new Promise((resolve) => setTimeout(resolve, 100));
      }
      throw new Error(`message ${messageId} stayed ${status}, never ${statuses.join('/')}`);
    },
    close: async () => {
      await stopDispatcher();
      await stopWorkers();
      await Promise.all([connection.close(), client.connection.close()]);
      await api.close();
      await database?.drop();
      await sink.close();
    },
  };
}
