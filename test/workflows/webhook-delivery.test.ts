import { randomUUID } from 'node:crypto';
import { Worker } from '@temporalio/worker';
import { QueryTypes, type Sequelize } from 'sequelize';
import { Webhook } from 'standardwebhooks';
import { createWebhookActivities } from '../../activities/webhooks';
import { configKeyring, loadConfig } from '../../core/config';
import { insertPlatformEvent } from '../../db/repositories/platform-events';
import { createSequelize } from '../../db/sequelize';
import { webhookDeliveryWorkflow } from '../../workflows';
import { createTestWorkspace } from '../helpers/workspaces';
import { startTimeSkipping, type TimeSkippingEnv } from '../helpers/time-skipping';
import { createWebhookRow, startWebhookReceiver, type WebhookReceiver } from '../helpers/webhook-receiver';
import { workflowBundle } from '../../workers/workflow-bundle';

const SECOND = 1000;
const MINUTE = 60 * SECOND;
const HOUR = 60 * MINUTE;
/** When each attempt is due after a delivery starts: at once, then after 5 s, 5 min, 30 min, 2 h, 5 h, 10 h, 10 h. */
const DUE = [0, 5 * SECOND, 5 * MINUTE, 30 * MINUTE, 2 * HOUR, 5 * HOUR, 10 * HOUR, 10 * HOUR].map(
  (_, i, delays) => delays.slice(0, i + 1).reduce((sum, delay) => sum + delay, 0),
);

/**
 * The delivery workflow with its real activity, against Postgres and a real HTTP receiver whose
 * outage follows the time-skipping server's clock: hours of retries pass in seconds.
 */
describe('webhook delivery workflow', () => {
  const config = loadConfig({ ...process.env, WEBHOOKS_ALLOW_PRIVATE_TARGETS: 'true' });
  let env: TimeSkippingEnv;
  let db: Sequelize;
  let receiver: WebhookReceiver;
  let activities: ReturnType<typeof createWebhookActivities>;
  /** The receiver is down (503) until this time of the test server's clock. */
  let downUntil = 0;

  beforeAll(async () => {
    env = await startTimeSkipping();
    db = createSequelize(config.DATABASE_URL);
    receiver = await startWebhookReceiver(
      (path, at) => (path === '/gone' ? 410 : at < downUntil ? 503 : 200),
      async () => (await env.now()).getTime(),
    );
    activities = createWebhookActivities({ db, keyring: configKeyring(config), fetch: { allowPrivateTargets: true } });
  });
  afterAll(async () => {
    await receiver.close();
    await db.close();
    await env.close();
  });

  /** Stores a domain event for the workspace; the fan-out trigger makes one delivery per subscribed endpoint. */
  async function event(workspaceId: string, webhookId: string, name: string): Promise<string> {
    await insertPlatformEvent(db, workspaceId, { type: 'domain.verified', data: { id: randomUUID(), name } });
    const [row] = await db.query<{ id: string }>(
      "SELECT id FROM webhook_deliveries WHERE webhook_id = $1 AND status = 'pending' AND attempts = 0 ORDER BY created_at DESC LIMIT 1",
      { bind: [webhookId], type: QueryTypes.SELECT },
    );
    return row.id;
  }

  const worker = async () => Worker.create({ connection: env.nativeConnection, taskQueue: env.taskQueue, workflowBundle: await workflowBundle(), activities });

  const start = (workspaceId: string, deliveryId: string) =>
    env.workflowClient.start(webhookDeliveryWorkflow, {
      workflowId: `webhook:${deliveryId}`,
      taskQueue: env.taskQueue,
      args: [{ workspaceId, deliveryId, run: 1 }],
    });

  it('a receiver down for six hours gets every event once after it recovers, each attempt on schedule, each verifiable', async () => {
    const { workspaceId } = await createTestWorkspace(db);
    const webhook = await createWebhookRow(db, workspaceId, config.MASTER_KEY, { url: `${receiver.url}/down`, events: ['domain.verified'] });
    await (await worker()).runUntil(async () => {
      const t0 = (await env.now()).getTime();
      downUntil = t0 + 6 * HOUR;
      const started: Array<{ deliveryId: string; at: number; workflowId: string }> = [];
      // Three events: at once, an hour later and four hours later, all into the outage.
      for (const offset of [0, HOUR, 4 * HOUR]) {
        const now = (await env.now()).getTime();
        if (t0 + offset > now) await env.sleep(t0 + offset - now);
        const deliveryId = await event(workspaceId, webhook.id, `d${offset}.example.com`);
        const handle = await start(workspaceId, deliveryId);
        started.push({ deliveryId, at: (await env.now()).getTime(), workflowId: handle.workflowId });
      }
      const results: string[] = [];
      for (const { workflowId } of started) results.push(await env.workflowClient.getHandle(workflowId).result());
      expect(results).toEqual(['succeeded', 'succeeded', 'succeeded']);

      for (const { deliveryId, at } of started) {
        const requests = receiver.to('/down').filter((request) => request.headers['webhook-id'] === deliveryId);
        const succeededAt = requests.findIndex((request) => request.at >= downUntil);
        // Every attempt until the first one after the outage, and none after it: delivered once.
        expect(succeededAt).toBe(requests.length - 1);
        expect(DUE.findIndex((due) => at + due >= downUntil)).toBe(succeededAt);
        requests.forEach((request, i) => expect(Math.abs(request.at - at - DUE[i])).toBeLessThan(2 * SECOND));
        // One body for every attempt, each signed for the official library.
        expect(new Set(requests.map((request) => request.body)).size).toBe(1);
        for (const request of requests) expect(new Webhook(webhook.secret).verify(request.body, request.headers)).toMatchObject({ type: 'domain.verified' });
      }
      // 6, 6 and 5 attempts, as the schedule says.
      expect(started.map(({ deliveryId }) => receiver.to('/down').filter((request) => request.headers['webhook-id'] === deliveryId).length)).toEqual([6, 6, 5]);

      const log = await db.query<{ delivery_id: string; attempt: number; status: string; status_code: number }>(
        `SELECT a.delivery_id, a.attempt, a.status, a.status_code FROM webhook_attempts a WHERE a.delivery_id = ANY ($1::uuid[]) ORDER BY a.delivery_id, a.attempt`,
        { bind: [started.map((delivery) => delivery.deliveryId)], type: QueryTypes.SELECT },
      );
      const first = log.filter((row) => row.delivery_id === started[0].deliveryId);
      expect(first.map((row) => [row.attempt, row.status, row.status_code])).toEqual([
        [1, 'failed', 503], [2, 'failed', 503], [3, 'failed', 503], [4, 'failed', 503], [5, 'failed', 503], [6, 'succeeded', 200],
      ]);
      const deliveries = await db.query<{ status: string }>('SELECT status FROM webhook_deliveries WHERE id = ANY ($1::uuid[])', {
        bind: [started.map((delivery) => delivery.deliveryId)],
        type: QueryTypes.SELECT,
      });
      expect(deliveries.map((row) => row.status)).toEqual(['succeeded', 'succeeded', 'succeeded']);
    });
  });

  it('a 410 answer disables the endpoint at once: no retry, its waiting deliveries end, and new events make none', async () => {
    const { workspaceId } = await createTestWorkspace(db);
    const webhook = await createWebhookRow(db, workspaceId, config.MASTER_KEY, { url: `${receiver.url}/gone`, events: ['domain.verified'] });
    await (await worker()).runUntil(async () => {
      const first = await event(workspaceId, webhook.id, 'a.example.com');
      const waiting = await event(workspaceId, webhook.id, 'b.example.com');
      expect(await (await start(workspaceId, first)).result()).toBe('failed');
      await env.sleep(30 * HOUR);
      expect(receiver.to('/gone').filter((request) => request.headers['webhook-id'] === first)).toHaveLength(1);

      const [endpoint] = await db.query<{ enabled: boolean; disabled_reason: string }>('SELECT enabled, disabled_reason FROM webhooks WHERE id = $1', {
        bind: [webhook.id],
        type: QueryTypes.SELECT,
      });
      expect(endpoint).toEqual({ enabled: false, disabled_reason: 'gone' });
      const rows = await db.query<{ id: string; status: string; status_code: number | null; error: string }>(
        'SELECT id, status, status_code, error FROM webhook_deliveries WHERE webhook_id = $1',
        { bind: [webhook.id], type: QueryTypes.SELECT },
      );
      expect(rows.find((row) => row.id === first)).toMatchObject({ status: 'failed', status_code: 410, error: expect.stringMatching(/410/) });
      expect(rows.find((row) => row.id === waiting)).toMatchObject({ status: 'failed', status_code: null, error: expect.stringMatching(/disabled/) });
      await insertPlatformEvent(db, workspaceId, { type: 'domain.verified', data: {} });
      expect(await db.query('SELECT id FROM webhook_deliveries WHERE webhook_id = $1', { bind: [webhook.id], type: QueryTypes.SELECT })).toHaveLength(2);
    });
  });
});
