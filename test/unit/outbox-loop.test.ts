import pino from 'pino';
import { handOver, runOutboxLoop, whileLeased } from '../../workers/outbox-loop';

const logger = pino({ level: 'silent' });
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

describe('the outbox loop every dispatcher configures', () => {
  it('rounds that hand rows over follow each other at once; an empty round waits the interval', async () => {
    const at: number[] = [];
    const handed = [3, 2, 0, 0];
    const loop = runOutboxLoop({ name: 'test', logger, intervalMs: 200, round: async () => (at.push(Date.now()), handed.shift() ?? 0) });
    await sleep(450);
    await loop.stop();
    // Rounds 1 → 2 → 3 back to back; round 4 only after the empty round 3's interval.
    expect(at.length).toBeGreaterThanOrEqual(4);
    expect(at[2] - at[0]).toBeLessThan(150);
    expect(at[3] - at[2]).toBeGreaterThanOrEqual(190);
  });

  it('a wake while the loop backs off starts the next round at once', async () => {
    const at: number[] = [];
    const loop = runOutboxLoop({ name: 'test', logger, intervalMs: 60_000, round: async () => (at.push(Date.now()), 0) });
    await sleep(50);
    const woken = Date.now();
    loop.wake();
    await sleep(50);
    await loop.stop();
    expect(at).toHaveLength(2);
    expect(at[1] - woken).toBeLessThan(40);
  });

  it('a wake during a round (which may have claimed before the write) skips the back-off after it', async () => {
    const at: number[] = [];
    let wakeInRound: (() => void) | null = null;
    const loop = runOutboxLoop({
      name: 'test', logger, intervalMs: 60_000,
      round: async () => {
        at.push(Date.now());
        wakeInRound?.();
        wakeInRound = null;
        return 0;
      },
    });
    await sleep(30);
    wakeInRound = loop.wake;
    loop.wake();
    await sleep(50);
    await loop.stop();
    // Round 1, then round 2 at the wake (which wakes itself again mid-round), then round 3 at once; no more.
    expect(at).toHaveLength(3);
  });

  it('stop ends a back-off at once instead of waiting it out', async () => {
    const loop = runOutboxLoop({ name: 'test', logger, intervalMs: 60_000, round: async () => 0 });
    await sleep(20);
    const stopping = Date.now();
    await loop.stop();
    expect(Date.now() - stopping).toBeLessThan(100);
  });

  it('stop during a round ends the loop when the round does, without waiting out the back-off after it', async () => {
    let finishRound: (() => void) | null = null;
    const loop = runOutboxLoop({ name: 'test', logger, intervalMs: 60_000, round: () => new Promise<number>((done) => (finishRound = () => done(0))) });
    await sleep(20);
    const stopped = loop.stop();
    finishRound!();
    const stopping = Date.now();
    await stopped;
    expect(Date.now() - stopping).toBeLessThan(100);
  });

  it('a round that throws is logged and retried after the interval, and the loop goes on', async () => {
    const warnings: string[] = [];
    const spy = pino({ level: 'warn' }, { write: (line: string) => warnings.push(JSON.parse(line).msg) });
    let rounds = 0;
    const loop = runOutboxLoop({
      name: 'test dispatcher', logger: spy, intervalMs: 20,
      round: async () => {
        rounds += 1;
        if (rounds === 1) throw new Error('database away');
        return 0;
      },
    });
    await sleep(100);
    await loop.stop();
    expect(rounds).toBeGreaterThanOrEqual(2);
    expect(warnings[0]).toBe('test dispatcher: round failed; retrying');
  });

  it('a custom `more` keeps waiting after a partial round (the inbox drain waits unless its round was full)', async () => {
    let rounds = 0;
    const loop = runOutboxLoop({ name: 'test', logger, intervalMs: 150, round: async () => (rounds += 1, 5), more: (handed) => handed >= 200 });
    await sleep(100);
    await loop.stop();
    expect(rounds).toBe(1);
  });

  it('stop waits for the round in progress and starts no other', async () => {
    let finished = 0;
    let started = 0;
    const loop = runOutboxLoop({ name: 'test', logger, intervalMs: 10, round: async () => (started += 1, await sleep(80), finished += 1, 1) });
    await sleep(20);
    await loop.stop();
    expect(finished).toBe(started);
    const after = started;
    await sleep(50);
    expect(started).toBe(after);
  });
});

describe('handing claimed rows over', () => {
  it('answers the items whose start succeeded and reports each failure, without stopping the others', async () => {
    const failed: number[] = [];
    const started = await handOver([1, 2, 3, 4, 5], 2, async (item) => {
      if (item % 2 === 0) throw new Error('temporal refused');
    }, (_err, item) => failed.push(item));
    expect(started.sort()).toEqual([1, 3, 5]);
    expect(failed.sort()).toEqual([2, 4]);
  });

  it('runs at most `concurrency` starts at once', async () => {
    let running = 0;
    let most = 0;
    await handOver(Array.from({ length: 20 }, (_, i) => i), 4, async () => {
      running += 1;
      most = Math.max(most, running);
      await sleep(5);
      running -= 1;
    }, () => undefined);
    expect(most).toBe(4);
  });

  it('renews the lease while the work runs, survives a failed renewal, and stops renewing after', async () => {
    let renewals = 0;
    const result = await whileLeased(20, async () => {
      renewals += 1;
      if (renewals === 1) throw new Error('database away');
    }, async () => (await sleep(110), 'done'));
    const atEnd = renewals;
    await sleep(60);
    expect(result).toBe('done');
    expect(atEnd).toBeGreaterThanOrEqual(2);
    expect(renewals).toBe(atEnd);
  });
});
