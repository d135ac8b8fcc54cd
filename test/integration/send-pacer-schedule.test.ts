import { randomUUID } from 'node:crypto';
import type { Redis } from 'ioredis';
import { loadConfig } from '../../core/config';
import { closeRedis, createRedis, redisReady } from '../../db/redis';
import { type PaceLimit, type Reservation, SendPacer } from '../../db/send-pacer';
import { maxInWindow, smallestGap } from '../helpers/send-windows';

/**
 * The schedule the reservation script builds, on the real script in the real Redis, under a simulated
 * clock: thousands of arrivals in a second of test time, and exact instants to check the bound against.
 */
let redis: Redis;
let clock: number;

beforeAll(async () => {
  redis = createRedis(loadConfig(process.env).REDIS_URL);
  expect(await redisReady(redis, 5_000)).toBe(true);
});
afterAll(() => closeRedis(redis));
beforeEach(() => {
  clock = 1_700_000_000_000;
});

const simulatedPacer = () => new SendPacer(redis, { prefix: `test:${randomUUID()}:`, now: () => clock });

/** The reserved instant in whole microseconds (the script's unit), so spacing compares exactly. */
function slotUs(reservation: Reservation): number {
  if (!reservation.granted) throw new Error('expected a granted reservation');
  return Math.round(reservation.sendAt * 1_000);
}

/** Deterministic pseudo-random numbers in [0, 1) (mulberry32), so a failing run can be replayed. */
function random(seed: number): () => number {
  let state = seed;
  return () => {
    state = (state + 0x6d2b79f5) | 0;
    let t = Math.imul(state ^ (state >>> 15), 1 | state);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4_294_967_296;
  };
}

describe('send pacer schedule: one limit', () => {
  it.each([14, 200])('a backlog at %d/s is reserved exactly one interval apart, the first one now', async (rate) => {
    const pacer = simulatedPacer();
    const interval = Math.ceil(1_000_000 / rate);
    const slots: number[] = [];
    for (let i = 0; i < 50; i += 1) slots.push(slotUs(await pacer.reserve([{ key: 'ses', ratePerSecond: rate }])));
    expect(slots).toEqual(slots.map((_, i) => clock * 1_000 + i * interval));
  });

  it.each([
    { rate: 1, burst: 0 },
    { rate: 14, burst: 0 },
    { rate: 73.5, burst: 0 },
    { rate: 30, burst: 3 },
  ])('random arrivals at $rate/s (burst $burst): any 10 s window holds at most floor(10 × rate) + 1 + burst', async ({ rate, burst }) => {
    const pacer = simulatedPacer();
    const limit: PaceLimit = { key: 'provider', ratePerSecond: rate, burst };
    const interval = Math.ceil(1_000_000 / rate);
    const next = random(rate * 1_000 + burst);
    const slots: number[] = [];
    let backlogged = 0;
    let refused = 0;
    // Poisson arrivals at twice the rate for 5 s, then at a third of it for 5 s, and again: backlogs
    // build and drain. Some callers will not wait long.
    const start = clock;
    const arrivalRate = () => rate * (Math.floor((clock - start) / 5_000) % 2 === 0 ? 2 : 1 / 3);
    for (const end = clock + 30_000; clock < end; clock += Math.floor((-Math.log(1 - next()) * 1_000) / arrivalRate())) {
      const maxWaitMs = next() < 0.3 ? next() * 2_000 : undefined;
      const reservation = await pacer.reserve([limit], { maxWaitMs });
      if (!reservation.granted) {
        refused += 1;
        continue;
      }
      const slot = slotUs(reservation);
      if (reservation.waitMs > 0) backlogged += 1;
      // Waiting behind a backlog, without a burst to draw on: exactly one interval after the one before.
      if (burst === 0 && reservation.waitMs > 0) expect(slot - slots[slots.length - 1]).toBe(interval);
      slots.push(slot);
    }
    expect(backlogged).toBeGreaterThan(slots.length / 4);
    expect(refused).toBeGreaterThan(0);
    if (burst === 0) expect(smallestGap(slots)).toBeGreaterThanOrEqual(interval);
    expect(maxInWindow(slots, 10_000_000)).toBeLessThanOrEqual(Math.floor(10 * rate) + 1 + burst);
    expect(maxInWindow(slots, 1_000_000)).toBeLessThanOrEqual(Math.floor(rate) + 1 + burst);
  });

  it('after an idle spell a burst of 2 lets three go at once, then spaces the rest', async () => {
    const pacer = simulatedPacer();
    const waits: number[] = [];
    for (let i = 0; i < 5; i += 1) {
      const reservation = await pacer.reserve([{ key: 'ses', ratePerSecond: 10, burst: 2 }]);
      waits.push(reservation.granted ? reservation.waitMs : -1);
    }
    expect(waits).toEqual([0, 0, 0, 100, 200]);
  });

  it('a refused reservation reserves nothing, and its retryAfterMs is when the same request is granted', async () => {
    const pacer = simulatedPacer();
    const limit = { key: 'ses', ratePerSecond: 10 };
    await pacer.reserve([limit]);
    await pacer.reserve([limit]);
    for (let i = 0; i < 20; i += 1) {
      expect(await pacer.reserve([limit], { maxWaitMs: 150 })).toEqual({ granted: false, retryAfterMs: 50 });
    }
    clock += 49;
    expect((await pacer.reserve([limit], { maxWaitMs: 150 })).granted).toBe(false);
    clock += 1;
    expect(await pacer.reserve([limit], { maxWaitMs: 150 })).toEqual({ granted: true, waitMs: 150, sendAt: clock + 150 });
  });
});

describe('send pacer schedule: limits reserved together (Telegram: 30/s per bot, 1/s per chat)', () => {
  const bot = { key: 'telegram:bot1', ratePerSecond: 30 };
  const chat = (id: number) => ({ key: `telegram:bot1:chat${id}`, ratePerSecond: 1 });
  const interval = Math.ceil(1_000_000 / 30);

  it('a chat that must wait leaves the bot its capacity meanwhile: other chats fill the gaps, losing no slot', async () => {
    const pacer = simulatedPacer();
    const slowChat = [];
    for (let i = 0; i < 3; i += 1) slowChat.push(slotUs(await pacer.reserve([bot, chat(0)])));
    // One second apart, give or take the bot's grid (see `snap` in the script).
    for (const [i, slot] of slowChat.slice(1).entries()) {
      expect(slot - slowChat[i]).toBeGreaterThanOrEqual(1_000_000);
      expect(slot - slowChat[i]).toBeLessThan(1_000_000 + interval);
    }
    const others = [];
    for (let id = 1; id < 60; id += 1) others.push(slotUs(await pacer.reserve([bot, chat(id)])));
    // Plain GCRA would have put the 59 others after the slow chat's last send, at half the rate; gaps
    // filled off the bot's grid would have lost a slot in each. Here the 62 sends take 62 slots in a row.
    const all = [...slowChat, ...others].sort((a, b) => a - b);
    expect(all).toEqual(all.map((_, k) => clock * 1_000 + k * interval));
  });

  it('random arrivals over 40 chats: no chat above 1/s, the bot never above 30/s and at least 95% of it', async () => {
    const pacer = simulatedPacer();
    const next = random(30);
    const byChat = new Map<number, number[]>();
    const botSlots: number[] = [];
    const start = clock;
    // 40 sends per second for 20 s, each to a random chat: the bot has a backlog all along.
    for (const end = clock + 20_000; clock < end; clock += Math.floor(next() * 50)) {
      const id = Math.floor(next() * 40);
      const slot = slotUs(await pacer.reserve([bot, chat(id)]));
      botSlots.push(slot);
      byChat.set(id, [...(byChat.get(id) ?? []), slot]);
    }
    for (const slots of byChat.values()) {
      if (slots.length > 1) expect(smallestGap(slots)).toBeGreaterThanOrEqual(1_000_000);
    }
    expect(smallestGap(botSlots)).toBeGreaterThanOrEqual(interval);
    expect(maxInWindow(botSlots, 10_000_000)).toBeLessThanOrEqual(301);
    expect(Math.max(...botSlots)).toBeGreaterThan((start + 22_000) * 1_000);
    // While it lasts, the bot sends at its rate; after, the last few chats drain at 1/s each.
    expect(botSlots.filter((slot) => slot < (start + 20_000) * 1_000).length).toBeGreaterThanOrEqual(0.95 * 30 * 20);
  });
});
