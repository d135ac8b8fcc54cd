import { randomUUID } from 'node:crypto';
import { Client, Connection } from '@temporalio/client';
import { NativeConnection, type Worker } from '@temporalio/worker';
import { pino } from 'pino';
import type { Agent } from 'node:https';
import { QueryTypes } from 'sequelize';
import { type ActivityDeps, createActivities } from '../../activities';
import type { MessageStatus } from '../../db/repositories/messages';
import { createDefaultWorker, createSendsWorker } from '../../workers/create-worker';
import { outboxTiming, runOutbox } from '../../workers/outbox';
import type { AppDeps } from '../../api/app';
import { type ApiHarness, startApi } from './api-harness';
import { createVerifiedDomain } from './factories';
import { startSmtpSink, type SmtpSink } from './smtp-sink';

export interface EmailStack {
  api: ApiHarness;
  sink: SmtpSink;
  /** Adds a verified domain (with its own DKIM key; region us-east-1 unless given) to the workspace; returns its name. */
  verifiedDomain: (workspaceId: string, options?: { defaultFromName?: string; region?: string }) => Promise<string>;
  /** Waits until the message reaches one of these statuses (or fails the test after a while). */
  waitForStatus: (workspaceId: string, messageId: string, statuses: MessageStatus[], timeoutMs?: number) => Promise<MessageStatus>;
  /** Starts the workers; `sendRate` is the sends queue's server-side limit (high by default, for tests). */
  startWorkers: (sendRate?: number) => Promise<void>;
  stopWorkers: () => Promise<void>;
  close: () => Promise<void>;
}

/**
 * The whole send path in one test file: the real API, a worker (default and sends queues) on the test
 * Temporal server under a task-queue prefix of the file's own, and an SMTP sink as the provider.
 */
export async function startEmailStack(
  options: {
    snsAgent?: Agent;
    attachmentFetch?: AppDeps['attachmentFetch'];
    overrides?: Record<string, string>;
    outbox?: boolean;
    /** Extra activity dependencies (a metrics registry, a slowed step). */
    activities?: Omit<Partial<ActivityDeps>, 'db' | 'config'>;
  } = {},
): Promise<EmailStack> {
  const sink = await startSmtpSink();
  const prefix = `test-${randomUUID()}-`;
  const api = await startApi(
    { TASK_QUEUE_PREFIX: prefix, SMTP_URL: sink.url, EMAIL_PROVIDER: 'smtp', SEND_DISPATCH: 'inline', ...options.overrides },
    { snsAgent: options.snsAgent, attachmentFetch: options.attachmentFetch },
  );
  const config = api.config;
  const connection = await NativeConnection.connect({ address: config.TEMPORAL_ADDRESS });
  let running: Array<{ worker: Worker; done: Promise<void> }> = [];
  // Off by default: test files share one database, and an outbox starts every undispatched message in it
  // (a file that runs one uses a database of its own: isolated-database.ts).
  let outbox: { stop: () => Promise<void>; client: Client } | null = null;

  const startWorkers = async (sendRate = 1_000) => {
    const workerOptions = { connection, namespace: config.TEMPORAL_NAMESPACE, taskQueuePrefix: prefix, activities: createActivities({ db: api.db, config, ...options.activities }) };
    const workers = [await createDefaultWorker(workerOptions), await createSendsWorker({ ...workerOptions, ratePerSecond: sendRate })];
    running = workers.map((worker) => ({ worker, done: worker.run() }));
    if (options.outbox) {
      const client = new Client({ connection: await Connection.connect({ address: config.TEMPORAL_ADDRESS }) });
      const loop = runOutbox({ enabled: true, db: api.db, client, taskQueuePrefix: prefix, logger: pino({ level: 'silent' }), ...outboxTiming(config.SEND_DISPATCH) });
      outbox = { stop: loop.stop, client };
    }
  };
  const stopWorkers = async () => {
    if (outbox) {
      await outbox.stop();
      await outbox.client.connection.close();
      outbox = null;
    }
    for (const { worker } of running) worker.shutdown();
    await Promise.all(running.map(({ done }) => done));
    running = [];
  };
  await startWorkers();

  return {
    api,
    sink,
    startWorkers,
    stopWorkers,
    verifiedDomain: (workspaceId, domainOptions) => createVerifiedDomain(api.db, workspaceId, config.MASTER_KEY, domainOptions),
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
      await stopWorkers();
      await connection.close();
      await api.close();
      await sink.close();
    },
  };
}
