import { randomUUID } from 'node:crypto';
import type { Client } from '@temporalio/client';
import { pino } from 'pino';
import { QueryTypes, type Sequelize } from 'sequelize';
import { loadConfig } from '../../core/config';
import { createSequelize } from '../../db/sequelize';
import { connectTemporal } from '../../temporal/connection';
import { claimWebhookDeliveries } from '../../db/repositories/webhook-dispatch';
import { type Dispatch, dispatcherChannels, dispatchRound } from '../../workers/dispatcher';
import { queueMessages } from '../helpers/factories';
import { createIsolatedDatabase, type IsolatedDatabase } from '../helpers/isolated-database';
import { createTestWorkspace } from '../helpers/workspaces';

/**
 * What a round of the message and webhook dispatchers costs the database: every worker process runs one every
 * SEND_DISPATCH_INTERVAL_MS, most of them finding nothing. A database of its own, so the outbox is what this
 * file puts in it.
 */
let database: IsolatedDatabase;
let db: Sequelize;
let client: Client;
const statements: string[] = [];

beforeAll(async () => {
  database = await createIsolatedDatabase(process.env.DATABASE_URL ?? '');
  db = createSequelize(database.url, { log: (sql) => statements.push(sql) });
  client = await connectTemporal(loadConfig({ ...process.env, DATABASE_URL: database.url }));
});
afterAll(async () => {
  await client.connection.close();
  await db.close();
  await database.drop();
});

function newDispatch(): Dispatch {
  const config = loadConfig(process.env);
  return {
    options: { db, client, taskQueuePrefix: `test-${randomUUID()}-`, logger: pino({ level: 'silent' }), channels: dispatcherChannels(config), intervalMs: 100 },
    breaker: { probeIntervalMs: 1_500, deadlineMs: 86_400_000 },
    lastSweep: 0,
    down: new Set(),
    closedAt: new Map(),
    gathering: new Map(),
  };
}

const claims = () => statements.filter((sql) => sql.includes('pg_try_advisory_xact_lock')).length;

it('an idle round is two statements (the open breakers, then which channels have anything waiting), with no transaction', async () => {
  const dispatch = newDispatch();
  statements.length = 0;
  expect(await dispatchRound(dispatch)).toBe(0);
  expect(statements).toHaveLength(2);
  expect(statements.join('\n')).not.toContain('START TRANSACTION');
});

it('a round with email waiting claims on email alone, both classes, and hands the message over', async () => {
  const { workspaceId, domain } = await createTestWorkspace(db, { domain: true });
  const [id] = await queueMessages(db, workspaceId, { kind: 'transactional', count: 1, from: `a@${domain}` });
  const dispatch = newDispatch();
  statements.length = 0;
  expect(await dispatchRound(dispatch)).toBe(1);
  // One claim per class of the one channel with anything waiting: not the six of three channels and two classes.
  expect(claims()).toBe(2);
  const [row] = await db.query<{ dispatched: boolean }>('SELECT dispatched_at IS NOT NULL AS dispatched FROM messages WHERE id = $1', { bind: [id], type: QueryTypes.SELECT });
  expect(row.dispatched).toBe(true);
});

it('an idle round of the webhook dispatcher is one statement, with no transaction', async () => {
  statements.length = 0;
  expect(await claimWebhookDeliveries(db, { perEndpoint: 4, limit: 100, leaseMs: 30_000 })).toEqual([]);
  expect(statements).toHaveLength(1);
});
