import { performance } from 'node:perf_hooks';
import { setTimeout as sleep } from 'node:timers/promises';
import type { PaceLimit, Reservation } from './send-pacer';

export interface LocalAcquireOptions {
  /** This process's share of every limit's rate, read at each reservation (it changes as workers come and go). */
  share: () => number;
  /** Refuse when the caller would wait longer than this in all. */
  maxWaitMs?: number;
  signal?: AbortSignal;
  /** Read while queued: true gives up the wait (the shared pacer is back) and answers null. */
  abandon?: () => boolean;
}

export interface LocalSendPacerOptions {
  /** How late a woken caller may always still use its slot; see the bound above. */
  maxLatenessMs?: number;
  /** A monotonic clock in ms; performance.now by default (tests pass a simulated one to `reserve`). */
  now?: () => number;
}

/** Idle limits are forgotten once this many are remembered, so a stream of one-off chats costs no memory. */
const PRUNE_ABOVE = 1_000;

/**
 * The pacer of one process, for while the shared one (send-pacer.ts, in Redis) is unreachable: the same
 * reservations, kept in memory, at `share` of each limit's rate (the rate ÷ live workers, chosen by the
 * caller), so the workers together still keep every rate.
 *
 * The bound is the shared pacer's: reserved instants of one limit are at least one interval (1/(rate ×
 * share), rounded up to a whole microsecond) apart, so any window of w seconds holds at most
 * floor(w × rate × share) + 1 of this process's reservations, and a caller late for its slot by more than
 * max(one interval, `maxLatenessMs`) reserves again instead of sending. Bursts are not granted here: the
 * fallback is strict spacing, a little under the shared pacer's throughput where a limit has a burst.
 *
 * Plain GCRA on each limit, with no holes: a reservation on several limits (a Telegram bot and one chat)
 * takes the latest instant any of them allows and moves each one's frontier past it, so a slow chat can
 * leave some of its bot's capacity unused here. Good enough for an outage; exact all the same.
 *
 * A reservation is granted only when its slot is at most one interval of its fastest limit away; callers
 * of one set of limits queue in order behind each other until theirs is (and sleep until it out of the
 * queue). So when Redis answers again and callers switch back (`abandon`), the slots still to be used here
 * beside the shared pacer's lie within one interval: the switch double-spends at most one interval per limit.
 */
export class LocalSendPacer {
  /** Per limit key, its theoretical arrival time (µs on `now`): the earliest instant of its next slot. */
  private readonly tats = new Map<string, number>();
  /** Per set of limits, the tail of its queue of callers. */
  private readonly queues = new Map<string, Promise<void>>();
  private readonly maxLatenessMs: number;
  private readonly now: () => number;

  constructor(options: LocalSendPacerOptions = {}) {
    this.maxLatenessMs = options.maxLatenessMs ?? 4;
    this.now = options.now ?? (() => performance.now());
  }

  /**
   * Reserves the earliest instant all `limits` allow at `share` of their rates, when it is at most
   * `horizonMs` away; otherwise reserves nothing and says when to ask again. Slots are on `now`'s clock.
   */
  reserve(limits: readonly PaceLimit[], share: number, horizonMs: number): { granted: true; slot: number } | { granted: false; retryAfterMs: number } {
    checkLimits(limits, share);
    // Whole microseconds, as in the shared pacer: sums of intervals stay exact, so a slot is never a
    // rounding error early and a caller is never told to come back in no time at all.
    const now = Math.ceil(this.now() * 1_000);
    const slot = Math.max(now, ...limits.map(({ key }) => this.tats.get(key) ?? now));
    const horizon = Math.floor(horizonMs * 1_000);
    if (slot - now > horizon) return { granted: false, retryAfterMs: (slot - now - horizon) / 1_000 };
    if (this.tats.size > PRUNE_ABOVE) this.prune(now);
    for (const limit of limits) this.tats.set(limit.key, slot + intervalUs(limit, share));
    return { granted: true, slot: slot / 1_000 };
  }

  /**
   * Waits in order for a slot and then until it, as the shared pacer's `acquire` does. Answers null when
   * `abandon` said to stop while queued (nothing was reserved), and a refusal (nothing reserved either)
   * when the slot is further than `maxWaitMs` from the call. A caller too late for its slot (see the bound)
   * queues again for a new one.
   */
  async acquire(limits: readonly PaceLimit[], options: LocalAcquireOptions): Promise<Reservation | null> {
    const started = this.now();
    for (;;) {
      const turn = await this.inTurn(limits, () => this.reserveWhenNear(limits, options, started));
      if (!turn || !turn.granted) return turn;
      // Out of the queue while it sleeps, so the next caller reserves the following slot meanwhile.
      while (this.now() < turn.slot) await sleep(Math.ceil(turn.slot - this.now()), undefined, { signal: options.signal });
      if (this.now() - turn.slot < Math.max(this.maxLatenessMs, turn.horizon)) {
        return { granted: true, waitMs: turn.slot - started, sendAt: Date.now() };
      }
    }
  }

  /** Runs `work` once the callers of the same limits queued before this one are done with theirs. */
  private async inTurn<T>(limits: readonly PaceLimit[], work: () => Promise<T>): Promise<T> {
    const queue = limits.map(({ key }) => key).join('\n');
    const ahead = this.queues.get(queue) ?? Promise.resolve();
    let leave = () => {};
    const mine = new Promise<void>((resolve) => (leave = resolve));
    const tail = ahead.then(() => mine);
    this.queues.set(queue, tail);
    try {
      await ahead;
      return await work();
    } finally {
      leave();
      if (this.queues.get(queue) === tail) this.queues.delete(queue);
    }
  }

  /** Reserves once the slot is at most one interval away, waiting for that (a second at most between looks). */
  private async reserveWhenNear(
    limits: readonly PaceLimit[],
    options: LocalAcquireOptions,
    started: number,
  ): Promise<{ granted: true; slot: number; horizon: number } | Extract<Reservation, { granted: false }> | null> {
    for (;;) {
      if (options.abandon?.()) return null;
      const share = options.share();
      const horizon = Math.min(...limits.map((limit) => intervalUs(limit, share))) / 1_000;
      const room = (options.maxWaitMs ?? Infinity) - (this.now() - started);
      const turn = this.reserve(limits, share, Math.min(horizon, room));
      if (turn.granted) return { ...turn, horizon };
      const untilSlot = turn.retryAfterMs + Math.min(horizon, room);
      // As the shared pacer answers: how long until a caller with the same maxWaitMs could be granted.
      if (untilSlot > room) return { granted: false, retryAfterMs: Math.max(0, untilSlot - room) };
      // Not longer than a second at a time, so a shared pacer that is back is noticed while queued.
      await sleep(Math.ceil(Math.min(turn.retryAfterMs, 1_000)), undefined, { signal: options.signal });
    }
  }

  private prune(nowUs: number): void {
    for (const [key, tat] of this.tats) if (tat < nowUs) this.tats.delete(key);
  }
}

/** 1/(rate × share) in whole microseconds, rounded up as the shared pacer rounds its intervals. */
function intervalUs(limit: PaceLimit, share: number): number {
  return Math.ceil(1_000_000 / (limit.ratePerSecond * share));
}

function checkLimits(limits: readonly PaceLimit[], share: number): void {
  if (limits.length === 0) throw new Error('a reservation needs at least one limit');
  if (!(share > 0 && share <= 1)) throw new Error(`invalid share ${share}`);
  for (const { key, ratePerSecond } of limits) {
    if (!(ratePerSecond > 0 && Number.isFinite(ratePerSecond))) throw new Error(`invalid rate ${ratePerSecond} for ${key}`);
  }
}
