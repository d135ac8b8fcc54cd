import { randomUUID } from 'node:crypto';
import { createRedis, createSubscriber, redisReady } from '../../db/redis';
import { outboxWakePublisher } from '../../db/outbox-wake';
import { startEmailStack, type EmailStack } from '../helpers/email-stack';
import { createTestWorkspace } from '../helpers/workspaces';

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

describe('the dispatcher hears of each acceptance (db/outbox-wake.ts)', () => {
  let stack: EmailStack;
  beforeAll(async () => {
    // A back-off far longer than any test here: only the API's nudge can start a round in time.
    stack = await startEmailStack({ dispatchIntervalMs: 60_000 });
  });
  afterAll(() => stack.close());

  it('an email accepted while the dispatcher backs off is handed to Temporal and sent at once', async () => {
    const workspace = await createTestWorkspace(stack.api, { domain: true });
    await sleep(500); // the dispatcher's first rounds found nothing: it now backs off for a minute
    const accepted = Date.now();
    const response = await stack.api.call('POST', '/api/v1/emails', {
      key: workspace.apiKey,
      body: { from: `a@${workspace.domain}`, to: 'reset@example.org', subject: 'Reset', text: 'Your code', idempotencyKey: `wake-${randomUUID()}` },
    });
    expect(response.status).toBe(202);
    await stack.waitForStatus(workspace.workspaceId, (response.body as { id: string }).id, ['sent'], 10_000);
    expect(Date.now() - accepted).toBeLessThan(10_000);
  });

  it('every send path nudges: a batch and POST /messages are sent at once too', async () => {
    const workspace = await createTestWorkspace(stack.api, { domain: true });
    const from = `a@${workspace.domain}`;
    const batch = await stack.api.call('POST', '/api/v1/emails/batch', {
      key: workspace.apiKey,
      body: { emails: [0, 1].map((i) => ({ from, to: `b${i}@example.org`, subject: 'Receipt', text: 'T', idempotencyKey: `wake-${randomUUID()}` })) },
    });
    expect(batch.status).toBe(207);
    const message = await stack.api.call('POST', '/api/v1/messages', {
      key: workspace.apiKey,
      body: { channel: 'email', to: 'c@example.org', from, subject: 'Hello', text: 'T', idempotencyKey: `wake-${randomUUID()}` },
    });
    expect(message.status).toBe(202);
    const ids = [...(batch.body as { results: Array<{ id: string }> }).results.map((item) => item.id), (message.body as { id: string }).id];
    for (const id of ids) await stack.waitForStatus(workspace.workspaceId, id, ['sent'], 10_000);
  });
});

describe('the nudge publisher', () => {
  const url = process.env.REDIS_URL ?? '';

  it('a thousand acceptances at once cost Redis two messages, and a later one its own', async () => {
    const prefix = `test-${randomUUID()}-`;
    const subscriber = createSubscriber(url);
    const redis = createRedis(url);
    try {
      const heard: string[] = [];
      subscriber.on('message', (channel: string) => heard.push(channel));
      await subscriber.subscribe(`${prefix}outbox:wake`);
      // Commands fail at once while a connection is not ready yet (no offline queue): wait, as a serving API has.
      expect(await redisReady(redis, 5_000)).toBe(true);
      const wake = outboxWakePublisher(redis, prefix);
      for (let i = 0; i < 1_000; i += 1) wake();
      await sleep(300);
      // The first publish, then one for everything that came while it was in flight.
      expect(heard).toHaveLength(2);
      wake();
      await sleep(300);
      expect(heard).toHaveLength(3);
    } finally {
      subscriber.disconnect();
      redis.disconnect();
    }
  });

  it('with Redis unreachable, a nudge neither throws nor waits: the acceptance is already durable', async () => {
    const redis = createRedis('redis://127.0.0.1:1/0');
    redis.on('error', () => undefined);
    try {
      const wake = outboxWakePublisher(redis, 'test-');
      expect(() => wake()).not.toThrow();
      await sleep(100);
    } finally {
      redis.disconnect();
    }
  });
});
