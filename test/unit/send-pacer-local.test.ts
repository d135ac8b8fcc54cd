import { LocalSendPacer } from '../../db/send-pacer-local';
import type { PaceLimit } from '../../db/send-pacer';
import { maxInWindow } from '../helpers/send-windows';

/** A pacer on a clock the test moves: each caller reserves when its slot is due, as `acquire` would. */
function simulated() {
  let now = 0;
  const pacer = new LocalSendPacer({ now: () => now });
  return {
    pacer,
    at: (ms: number) => {
      now = ms;
    },
    /** Reserves back to back for `durationMs` with the horizon `acquire` uses (one interval); the slots. */
    drain(limits: readonly PaceLimit[], share: number, durationMs: number): number[] {
      const slots: number[] = [];
      const horizon = Math.min(...limits.map((limit) => Math.ceil(1_000_000 / (limit.ratePerSecond * share)) / 1_000));
      while (now < durationMs) {
        const turn = pacer.reserve(limits, share, horizon);
        if (turn.granted) slots.push(turn.slot);
        else now += turn.retryAfterMs;
      }
      return slots;
    },
  };
}

describe('local send pacer (Redis away)', () => {
  it.each([
    [100, 1, 1_000],
    [100, 1 / 3, 1_000],
    [14, 1 / 2, 10_000],
    [30, 1 / 7, 3_000],
  ])('at %d/s with a share of %d: any window of w s holds at most floor(w × rate × share) + 1 slots, and under backlog nearly that many', (rate, share, windowMs) => {
    const clock = simulated();
    const slots = clock.drain([{ key: 'email:smtp', ratePerSecond: rate }], share, 60_000);
    const bound = Math.floor((windowMs / 1_000) * rate * share) + 1;
    expect(maxInWindow(slots, windowMs)).toBeLessThanOrEqual(bound);
    // One fewer where the interval, rounded up to a whole microsecond, no longer divides the window.
    expect(maxInWindow(slots, windowMs)).toBeGreaterThanOrEqual(bound - 1);
    // Exactly one interval apart, never closer.
    const gaps = slots.slice(1).map((slot, index) => slot - slots[index]);
    expect(Math.min(...gaps)).toBeGreaterThanOrEqual(1_000 / (rate * share));
  });

  it('a Telegram reservation on the bot and one chat keeps both: no chat above its share of 1/s, the bot never above its share of 30/s', () => {
    const clock = simulated();
    const share = 1 / 2;
    const bot = { key: 'telegram:bot1', ratePerSecond: 30 };
    const chats = Array.from({ length: 40 }, (_, index) => ({ key: `telegram:bot1:chat${index}`, ratePerSecond: 1 }));
    const byChat = new Map<string, number[]>();
    const all: number[] = [];
    for (let now = 0; now < 20_000; now += 5) {
      clock.at(now);
      for (const chat of chats) {
        const turn = clock.pacer.reserve([bot, chat], share, 1_000 / (30 * share));
        if (!turn.granted) continue;
        all.push(turn.slot);
        byChat.set(chat.key, [...(byChat.get(chat.key) ?? []), turn.slot]);
      }
    }
    all.sort((a, b) => a - b);
    expect(maxInWindow(all, 1_000)).toBeLessThanOrEqual(Math.floor(30 * share) + 1);
    expect(maxInWindow(all, 10_000)).toBeGreaterThanOrEqual(Math.floor(10 * 30 * share * 0.95));
    for (const slots of byChat.values()) expect(maxInWindow(slots, 10_000)).toBeLessThanOrEqual(Math.floor(10 * share) + 1);
  });

  it('a slot further away than the horizon is not reserved: nothing is taken, and the answer says when to ask again', () => {
    const clock = simulated();
    const limit = { key: 'email:ses', ratePerSecond: 10 };
    expect(clock.pacer.reserve([limit], 1, 100)).toEqual({ granted: true, slot: 0 });
    expect(clock.pacer.reserve([limit], 1, 50)).toEqual({ granted: false, retryAfterMs: 50 });
    expect(clock.pacer.reserve([limit], 1, 100)).toEqual({ granted: true, slot: 100 });
  });

  it('callers queued on real timers go in order, within the bound in every window, and a caller told to abandon leaves the queue without a slot', async () => {
    const pacer = new LocalSendPacer();
    const limits = [{ key: 'email:smtp', ratePerSecond: 50 }];
    let abandon = false;
    const sent: Array<{ index: number; at: number }> = [];
    const started = performance.now();
    const turns = Array.from({ length: 10 }, (_, index) =>
      pacer.acquire(limits, { share: () => 1, maxWaitMs: 5_000, abandon: () => abandon && index >= 8 }).then((turn) => {
        if (turn?.granted) sent.push({ index, at: performance.now() });
        return turn;
      }),
    );
    setTimeout(() => (abandon = true), 100);
    const answers = await Promise.all(turns);
    expect(answers.slice(8)).toEqual([null, null]);
    expect(sent.map(({ index }) => index)).toEqual([0, 1, 2, 3, 4, 5, 6, 7]);
    // 50/s: 8 turns take at least 7 intervals, and no 100 ms holds more than floor(0.1 × 50) + 1.
    expect(sent[7].at - started).toBeGreaterThanOrEqual(7 * 20 - 1);
    expect(maxInWindow(sent.map(({ at }) => at), 100)).toBeLessThanOrEqual(6);
  });

  it('a caller that would wait past maxWaitMs is refused with how long until a turn', async () => {
    const pacer = new LocalSendPacer();
    const limits = [{ key: 'whatsapp:twilio:+1555', ratePerSecond: 1 }];
    expect(await pacer.acquire(limits, { share: () => 1, maxWaitMs: 500 })).toMatchObject({ granted: true });
    const refused = await pacer.acquire(limits, { share: () => 1, maxWaitMs: 500 });
    expect(refused).toMatchObject({ granted: false });
    expect(refused?.granted === false && refused.retryAfterMs).toBeGreaterThan(0);
    expect(refused?.granted === false && refused.retryAfterMs).toBeLessThanOrEqual(1_000);
  });
});
