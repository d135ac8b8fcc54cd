import { randomUUID } from 'node:crypto';
import { createServer, type Server, type Socket, connect } from 'node:net';
import { performance } from 'node:perf_hooks';
import { Writable } from 'node:stream';
import { pino } from 'pino';
import { Registry } from 'prom-client';
import { QueryTypes, type Sequelize } from 'sequelize';
import { createPacing, emailPaceLimits, telegramPaceLimits } from '../../activities/pacing';
import { loadConfig } from '../../core/config';
import { WORKER_LIVE_FOR_MS } from '../../core/worker-registry';
import { closeRedis, createRedis, redisReady } from '../../db/redis';
import { beatWorker, countLiveWorkers } from '../../db/repositories/worker-registry';
import type { PaceLimit } from '../../db/send-pacer';
import { createSequelize } from '../../db/sequelize';
import { runWorkerRegistry } from '../../workers/worker-registry';
import { createIsolatedDatabase } from '../helpers/isolated-database';
import { until } from '../helpers/polling';
import { achievedRate, KEEPS_UP, maxInWindow } from '../helpers/send-windows';

/**
 * Issue 30: Redis is not a single point of stopping. The pacer's Redis is reached through a relay the test
 * cuts (connections reset, new ones refused, as when Redis is stopped) and restores; live workers are rows
 * of the worker registry in a database of this file's own.
 */
const base = loadConfig(process.env);
let database: { url: string; drop: () => Promise<void> };
let db: Sequelize;
const silent = pino({ level: 'silent' });

beforeAll(async () => {
  database = await createIsolatedDatabase(base.DATABASE_URL);
  db = createSequelize(database.url);
});
afterAll(async () => {
  await db.close();
  await database.drop();
});

/** `loops` callers pacing back to back until `ms` pass; the instant of each turn. */
async function paceFor(pace: (limits: readonly PaceLimit[]) => Promise<void>, limitsOf: (loop: number) => readonly PaceLimit[], loops: number, ms: number): Promise<number[][]> {
  const deadline = performance.now() + ms;
  return Promise.all(
    Array.from({ length: loops }, async (_, loop) => {
      const turns: number[] = [];
      while (performance.now() < deadline) {
        await pace(limitsOf(loop));
        turns.push(performance.now());
      }
      return turns;
    }),
  );
}

describe('worker registry', () => {
  it('counts workers that beat lately, not one that missed three beats; forgets a worker dead a minute; a clean stop leaves at once', async () => {
    const registry = runWorkerRegistry({ db, logger: silent, intervalMs: 100 });
    const other = { id: randomUUID(), host: 'elsewhere', pid: 4242 };
    const rows = () => db.query<{ id: string }>('SELECT id FROM worker_processes', { type: QueryTypes.SELECT });
    try {
      await beatWorker(db, other);
      await until('both workers live', () => countLiveWorkers(db, WORKER_LIVE_FOR_MS), (live) => live === 2);

      await db.query("UPDATE worker_processes SET beat_at = now() - interval '20 seconds' WHERE id = $1", { bind: [other.id] });
      expect(await countLiveWorkers(db, WORKER_LIVE_FOR_MS)).toBe(1);

      await db.query("UPDATE worker_processes SET beat_at = now() - interval '2 minutes' WHERE id = $1", { bind: [other.id] });
      expect(await until('the dead worker forgotten', rows, (found) => found.length === 1)).toEqual([{ id: registry.id }]);
    } finally {
      await registry.stop();
      await db.query('DELETE FROM worker_processes WHERE id = $1', { bind: [other.id] });
    }
    expect(await rows()).toEqual([]);
  });
});

describe('pacing while Redis is away', () => {
  it('Redis unreachable: sends go on at this worker\'s share (rate ÷ live workers) for email and Telegram alike, flagged by the gauge and one log line; Redis back: the shared pacer again', async () => {
    const relay = await cuttableRelay(new URL(base.REDIS_URL));
    const redis = createRedis(relay.url).on('error', () => undefined);
    const lines: string[] = [];
    const logger = pino({ level: 'info' }, new Writable({
      write(chunk: Buffer, _encoding, done) {
        lines.push(chunk.toString());
        done();
      },
    }));
    const metrics = new Registry();
    const prefix = `test-${randomUUID()}-`;
    const config = loadConfig({ ...process.env, SEND_RATE_PER_SECOND: '20', EMAIL_PROVIDER: 'smtp', TASK_QUEUE_PREFIX: prefix });
    const pacing = createPacing({ config, redis, db, logger, metrics, fallback: { probeMs: 200, shareRefreshMs: 500 } });
    const workers = [randomUUID(), randomUUID()];
    const gauge = async () => (await metrics.getSingleMetric('messaging_send_pacer_fallback')?.get())?.values[0]?.value;
    const saying = (text: string) => lines.filter((line) => line.includes(text)).length;
    try {
      expect(await redisReady(redis, 5_000)).toBe(true);
      for (const id of workers) await beatWorker(db, { id, host: 'test', pid: 1 });
      await pacing.pace(emailPaceLimits(config));
      expect(await redis.exists(`${prefix}pace:email:smtp`)).toBe(1);
      expect(await gauge()).toBe(0);

      relay.cut();
      const chats = ['1001', '1002'];
      const [email, telegram] = await Promise.all([
        paceFor(pacing.pace, () => emailPaceLimits(config), 10, 4_000),
        paceFor(pacing.pace, (loop) => telegramPaceLimits(7, chats[loop % 2]), 4, 4_000),
      ]);
      const sent = email.flat();
      // Two live workers: this one's share of 20/s is 10/s; any second holds at most floor((1 + 0.05) × 10) + 1
      // (the 50 ms a woken sender may be late, activities/pacing.ts).
      expect(sent.length).toBeGreaterThan(0);
      expect(maxInWindow(sent, 1_000)).toBeLessThanOrEqual(11);
      expect(achievedRate(sent)).toBeGreaterThanOrEqual(KEEPS_UP * 10);
      // Each chat: its share of 1/s, 0.5/s, so at most 2 in 4 s and at least one.
      for (const [index] of chats.entries()) {
        const turns = telegram.filter((_, loop) => loop % 2 === index).flat();
        expect(turns.length).toBeGreaterThanOrEqual(1);
        expect(maxInWindow(turns, 4_000)).toBeLessThanOrEqual(Math.floor(4.05 * 0.5) + 1);
      }
      expect(await gauge()).toBe(1);
      expect(saying('Redis unreachable')).toBe(1);

      relay.restore();
      await until('the shared pacer back', async () => {
        await pacing.pace(emailPaceLimits(config));
        return gauge();
      }, (value) => value === 0, 20_000);
      await redis.del(`${prefix}pace:email:smtp`);
      await pacing.pace(emailPaceLimits(config));
      expect(await redis.exists(`${prefix}pace:email:smtp`)).toBe(1);
      expect(saying('Redis answers again')).toBe(1);
      expect(saying('Redis unreachable')).toBe(1);
    } finally {
      await pacing.close();
      await closeRedis(redis);
      relay.close();
      await db.query('DELETE FROM worker_processes WHERE id = ANY ($1::uuid[])', { bind: [workers] });
    }
  });
});

/** A TCP relay to Redis that can be cut (connections reset, new ones refused) and restored on the same port. */
async function cuttableRelay(target: URL): Promise<{ url: string; cut: () => void; restore: () => void; close: () => void }> {
  const sockets = new Set<Socket>();
  const server: Server = createServer((client) => {
    const upstream = connect(Number(target.port), target.hostname);
    for (const socket of [client, upstream]) {
      sockets.add(socket);
      socket.on('close', () => sockets.delete(socket));
    }
    client.pipe(upstream).pipe(client);
    client.on('error', () => upstream.destroy());
    upstream.on('error', () => client.destroy());
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as { port: number };
  const url = new URL(target);
  url.port = String(port);
  const cut = () => {
    server.close();
    for (const socket of sockets) socket.destroy();
  };
  return { url: url.toString(), cut, restore: () => server.listen(port, '127.0.0.1'), close: cut };
}
