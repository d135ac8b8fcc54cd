import { randomUUID } from 'node:crypto';
import type { Client } from '@temporalio/client';
import { connectTemporal } from '../../temporal/connection';
import { NativeConnection } from '@temporalio/worker';
import { QueryTypes } from 'sequelize';
import { createActivities } from '../../activities';
import { loadConfig } from '../../core/config';
import { PLANS, periodKey, usagePeriodAt } from '../../core/plans';
import { reserveQuota } from '../../db/repositories/usage';
import { createSequelize } from '../../db/sequelize';
import { usageRollupWorkflow } from '../../workflows';
import { createDefaultWorker } from '../../workers/create-worker';
import { taskQueueName } from '../../core/task-queues';
import { createTestWorkspace } from '../helpers/workspaces';
import { temporalPorts } from '../../temporal/activity-ports';

describe('the worker on a real Temporal server', () => {
  const config = loadConfig({ ...process.env, TASK_QUEUE_PREFIX: `test-${randomUUID()}-` });
  const db = createSequelize(config.DATABASE_URL);
  let nativeConnection: NativeConnection;
  let client: Client;

  beforeAll(async () => {
    nativeConnection = await NativeConnection.connect({ address: config.TEMPORAL_ADDRESS });
    client = await connectTemporal(config);
  });
  afterAll(async () => {
    await nativeConnection.close();
    await client.connection.close();
    await db.close();
  });

  it('the usage rollup closes last month into statements, then waits for the current one', async () => {
    const lastMonth = usagePeriodAt(new Date(usagePeriodAt(new Date()).start.getTime() - 1));
    const { workspaceId } = await createTestWorkspace(db, { plan: 'pro' });
    await reserveQuota(db, workspaceId, PLANS.pro, lastMonth, 500_003, { channel: 'email', kind: 'transactional' });

    const worker = await createDefaultWorker({
      connection: nativeConnection,
      namespace: config.TEMPORAL_NAMESPACE,
      taskQueuePrefix: config.TASK_QUEUE_PREFIX,
      activities: createActivities({ db, config, temporal: temporalPorts(client, config.TASK_QUEUE_PREFIX) }),
    });
    const workflowId = `usage-rollup-${randomUUID()}`;
    await worker.runUntil(async () => {
      await client.workflow.start(usageRollupWorkflow, {
        workflowId,
        taskQueue: taskQueueName(config.TASK_QUEUE_PREFIX, 'default'),
        args: [{ periodStart: periodKey(lastMonth) }],
      });
      let statements: Array<{ overage: string }> = [];
      for (let attempt = 0; attempt < 100 && statements.length === 0; attempt += 1) {
        statements = await db.query('SELECT overage FROM usage_statements WHERE workspace_id = $1 AND period_start = $2', {
          bind: [workspaceId, periodKey(lastMonth)],
          type: QueryTypes.SELECT,
        });
        if (statements.length === 0) await new Promise((resolve) => setTimeout(resolve, 100));
      }
      expect(statements).toEqual([{ overage: '3' }]);
      await client.workflow.getHandle(workflowId).terminate('test over');
    });
  });
});
