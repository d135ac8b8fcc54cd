import { DefaultLogger, NativeConnection, Runtime } from '@temporalio/worker';
import { type Logger, pino } from 'pino';
import { collectDefaultMetrics, Registry } from 'prom-client';
import { createActivities, emailChannelFromConfig } from '../activities';
import { type Config, loadConfig, tracesEndpoint } from '../core/config';
import { logRedaction } from '../core/log-redaction';
import { subscribeOutboxWake } from '../db/outbox-wake';
import { closeRedis, createRedis } from '../db/redis';
import { createSesClients } from '../providers/ses/clients';
import { createSequelize } from '../db/sequelize';
import { createTemplateRenderer, templateRendererOptions } from '../infra/template-renderer';
import { startTracing } from '../infra/tracing';
import { temporalPorts } from '../temporal/activity-ports';
import { connectTemporal, temporalConnectionOptions, traceWorkflowClients } from '../temporal/connection';
import { startSingletons } from '../temporal/control-plane';
import { createBulkWorker, createControlWorker, createDefaultWorker, createSendsWorker } from './create-worker';
import { dispatcherBreaker, dispatcherChannels, runDispatcher } from './dispatcher';
import { runInboundDispatcher } from './inbox/dispatcher';
import { registerMemoryMetrics, writeHeapSnapshotsOnSignal } from './memory-diagnostics';
import { startMetricsServer } from './metrics-server';
import { OUTBOX_SAMPLE_MS, runOutboxGauges } from './outbox-gauges';
import { runWebhookDispatcher } from './webhook-dispatcher';
import { runWorkerRegistry } from './worker-registry';
import { useWorkflowBundle } from './workflow-bundle';

/** Temporal may still be starting (compose, a rolling restart): keep trying for a while before giving up. */
async function connectWithRetry(config: Config, logger: Logger): Promise<NativeConnection> {
  const deadline = Date.now() + 120_000;
  for (;;) {
    try {
      return await NativeConnection.connect(temporalConnectionOptions(config));
    } catch (error) {
      if (Date.now() > deadline) throw error;
      logger.warn({ address: config.TEMPORAL_ADDRESS }, 'Temporal not reachable yet; retrying');
      await new Promise((resolve) => setTimeout(resolve, 2_000));
    }
  }
}

async function main(): Promise<void> {
  const config = loadConfig(process.env);
  const logger = pino({ level: config.LOG_LEVEL, base: { process: 'worker' }, redact: logRedaction });
  // The SDK logs the workflow bundler's output and every worker state change at INFO: noise in production.
  const verbose = config.LOG_LEVEL === 'debug' || config.LOG_LEVEL === 'trace';
  // The SDK shuts the workers down on SIGUSR2 too (for nodemon); when SIGUSR2 asks for heap snapshots it must not.
  const shutdownSignals: NodeJS.Signals[] = config.WORKER_HEAP_SNAPSHOT_DIR ? ['SIGINT', 'SIGTERM', 'SIGQUIT'] : ['SIGINT', 'SIGTERM', 'SIGQUIT', 'SIGUSR2'];
  Runtime.install({ logger: new DefaultLogger(verbose ? 'DEBUG' : 'WARN'), shutdownSignals });
  // Before the client and the workers are made: both ask whether tracing is on (docs/observability.md, Traces).
  const tracing = await startTracing(config, 'worker');
  if (tracing) {
    await traceWorkflowClients(true);
    logger.info({ traces: tracesEndpoint(config) }, 'tracing on');
  }
  // Taken for the untraced bundle only: with tracing on, the worker still bundles its own, with the interceptors.
  if (config.WORKFLOW_BUNDLE_PATH) useWorkflowBundle({ codePath: config.WORKFLOW_BUNDLE_PATH });
  const db = createSequelize(config.DATABASE_URL);
  const connection = await connectWithRetry(config, logger);
  const client = await connectTemporal(config);
  await startSingletons(client, config.TASK_QUEUE_PREFIX, {
    intervalMs: config.RECONCILE_INTERVAL_MS,
    round: { staleAfterMs: config.RECONCILE_STALE_AFTER_MS, limit: 200, recheckAfterMs: 15 * 60_000 },
  });
  const metrics = new Registry();
  collectDefaultMetrics({ register: metrics });
  const metricsServer = config.WORKER_METRICS_PORT ? await startMetricsServer(metrics, config.WORKER_METRICS_HOST, config.WORKER_METRICS_PORT) : null;

  // Its outages are reported by the pacer (one line on losing Redis, one on getting it back), not by ioredis
  // once per reconnection attempt.
  const redis = createRedis(config.REDIS_URL).on('error', () => undefined);
  // Counted by every worker's pacer while Redis is away: each paces at the rate ÷ live workers.
  const registry = runWorkerRegistry({ db, logger });
  const templateRenderer = createTemplateRenderer(templateRendererOptions(config, logger));
  // Made here to be closed at shutdown: an SMTP pool's idle connection stays open for its socket timeout (a
  // minute) and would keep the process alive that long after "worker stopped".
  const sesClients = createSesClients();
  const emailChannel = emailChannelFromConfig(config, db, sesClients);
  const options = {
    connection,
    namespace: config.TEMPORAL_NAMESPACE,
    taskQueuePrefix: config.TASK_QUEUE_PREFIX,
    activities: createActivities({ db, config, emailChannel, sesClients, temporal: temporalPorts(client, config.TASK_QUEUE_PREFIX), logger, metrics, templateRenderer, redis }),
  };
  const named = [
    { queue: 'control', worker: await createControlWorker(options) },
    { queue: 'default', worker: await createDefaultWorker(options) },
    { queue: 'sends', worker: await createSendsWorker(options) },
    { queue: 'bulk', worker: await createBulkWorker(options, config.BULK_ACTIVITY_SLOTS) },
  ];
  const workers = named.map(({ worker }) => worker);
  registerMemoryMetrics(metrics, named);
  if (config.WORKER_HEAP_SNAPSHOT_DIR) writeHeapSnapshotsOnSignal(config.WORKER_HEAP_SNAPSHOT_DIR, named, logger);
  const messageDispatcher = config.SEND_DISPATCHER
    ? runDispatcher({
      db,
      client,
      taskQueuePrefix: config.TASK_QUEUE_PREFIX,
      logger,
      channels: dispatcherChannels(config),
      intervalMs: config.SEND_DISPATCH_INTERVAL_MS,
      breaker: dispatcherBreaker(config),
      registry: metrics,
    })
    : null;
  const outboxGauges = messageDispatcher
    ? runOutboxGauges({ db, registry: metrics, logger, channels: dispatcherChannels(config).map(({ channel }) => channel), intervalMs: OUTBOX_SAMPLE_MS })
    : null;
  // The API's nudge after each transactional acceptance (db/outbox-wake.ts): the round starts at once.
  const unsubscribeWake = messageDispatcher ? subscribeOutboxWake(config.REDIS_URL, config.TASK_QUEUE_PREFIX, messageDispatcher.wake) : null;
  const dispatchers = messageDispatcher
    ? [
      messageDispatcher,
      runWebhookDispatcher({
        db,
        client,
        taskQueuePrefix: config.TASK_QUEUE_PREFIX,
        logger,
        perEndpoint: config.WEBHOOK_IN_FLIGHT_PER_ENDPOINT,
        intervalMs: config.SEND_DISPATCH_INTERVAL_MS,
        sweepIntervalMs: config.WEBHOOK_SLOT_SWEEP_INTERVAL_MS,
      }),
      runInboundDispatcher({ db, client, taskQueuePrefix: config.TASK_QUEUE_PREFIX, logger, intervalMs: 1_000 }),
    ]
    : [];
  logger.info({ prefix: config.TASK_QUEUE_PREFIX, sendRate: config.SEND_RATE_PER_SECOND }, 'worker running');
  // The SDK's runtime stops the workers on SIGINT/SIGTERM and lets running tasks finish; run() returns after.
  await Promise.all(workers.map((worker) => worker.run()));
  unsubscribeWake?.();
  await Promise.all([...dispatchers.map((dispatcher) => dispatcher.stop()), outboxGauges?.stop()]);
  await registry.stop();
  await Promise.allSettled([
    db.close(), connection.close(), client.connection.close(), templateRenderer.close(), emailChannel.close(), metricsServer?.close(), closeRedis(redis),
  ]);
  // The last spans (workflows and activities that finished while stopping) leave before the process does.
  await tracing?.shutdown();
  logger.info('worker stopped');
}

main().catch((err: unknown) => {
  console.error(err);
  process.exit(1);
});
