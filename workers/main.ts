import { Client, Connection, WorkflowExecutionAlreadyStartedError } from '@temporalio/client';
import { DefaultLogger, NativeConnection, Runtime } from '@temporalio/worker';
import { type Logger, pino } from 'pino';
import { createActivities } from '../activities';
import { loadConfig } from '../core/config';
import { USAGE_ROLLUP_WORKFLOW_ID } from '../core/ids';
import { createSequelize } from '../db/sequelize';
import { usageRollupWorkflow } from '../workflows';
import { createDefaultWorker } from './create-worker';
import { taskQueueName } from './task-queues';

/** Deployment-wide workflows that must always be running; starting one that runs is a no-op. */
async function ensureSingletons(client: Client, taskQueuePrefix: string): Promise<void> {
  try {
    await client.workflow.start(usageRollupWorkflow, {
      workflowId: USAGE_ROLLUP_WORKFLOW_ID,
      taskQueue: taskQueueName(taskQueuePrefix, 'default'),
      args: [{}],
    });
  } catch (error) {
    if (!(error instanceof WorkflowExecutionAlreadyStartedError)) throw error;
  }
}

/** Temporal may still be starting (compose, a rolling restart): keep trying for a while before giving up. */
async function connectWithRetry(address: string, logger: Logger): Promise<NativeConnection> {
  const deadline = Date.now() + 120_000;
  for (;;) {
    try {
      return await NativeConnection.connect({ address });
    } catch (error) {
      if (Date.now() > deadline) throw error;
      logger.warn({ address }, 'Temporal not reachable yet; retrying');
      await new Promise((resolve) => setTimeout(resolve, 2_000));
    }
  }
}

async function main(): Promise<void> {
  const config = loadConfig(process.env);
  const logger = pino({ level: config.LOG_LEVEL, base: { process: 'worker' } });
  // The SDK logs the workflow bundler's output and every worker state change at INFO: noise in production.
  const verbose = config.LOG_LEVEL === 'debug' || config.LOG_LEVEL === 'trace';
  Runtime.install({ logger: new DefaultLogger(verbose ? 'DEBUG' : 'WARN') });
  const db = createSequelize(config.DATABASE_URL);
  const connection = await connectWithRetry(config.TEMPORAL_ADDRESS, logger);
  const client = new Client({
    connection: await Connection.connect({ address: config.TEMPORAL_ADDRESS }),
    namespace: config.TEMPORAL_NAMESPACE,
  });
  await ensureSingletons(client, config.TASK_QUEUE_PREFIX);

  const worker = await createDefaultWorker({
    connection,
    namespace: config.TEMPORAL_NAMESPACE,
    taskQueuePrefix: config.TASK_QUEUE_PREFIX,
    activities: createActivities({ db }),
  });
  logger.info({ taskQueue: taskQueueName(config.TASK_QUEUE_PREFIX, 'default') }, 'worker running');
  // The SDK's runtime stops the worker on SIGINT/SIGTERM and lets running tasks finish; run() returns after.
  await worker.run();
  await Promise.allSettled([db.close(), connection.close(), client.connection.close()]);
  logger.info('worker stopped');
}

main().catch((err: unknown) => {
  console.error(err);
  process.exit(1);
});
