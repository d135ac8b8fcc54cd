import { performance } from 'node:perf_hooks';
import { setTimeout as sleep } from 'node:timers/promises';
import type { Redis } from 'ioredis';
import { RESERVE_SCRIPT, RESERVE_SCRIPT_SHA } from './send-pacer-script';
import { ServerClock } from './server-clock';

/**
 * Outbound pacing shared by every worker process through Redis: GCRA ("virtual scheduling") reservations.
 *
 * A caller asks for a slot on one or more limits at once (`[{ key: 'telegram:bot1', ratePerSecond: 30 },
 * { key: 'telegram:bot1:chat9', ratePerSecond: 1 }]`); one Lua script finds the earliest instant every
 * limit allows, reserves it on all of them atomically, and answers how long to wait. `acquire` then
 * sleeps until that instant.
 *
 * The bound. Reserved instants of one limit are at least one interval (1/rate, rounded up to a whole
 * microsecond) apart, so ANY window of w seconds holds at most floor(w × rate) + 1 reservations, plus
 * `burst` when one is configured (default none). Instants come from the Redis server's clock (TIME), so
 * processes with skewed clocks agree; each process maps them onto its own monotonic clock (see
 * server-clock.ts), so a send goes out at its reserved instant or later, never earlier.
 *
 * Sends happen later than their slots by whatever the caller's event loop adds. `acquire` sends only
 * while it is less than one interval late (less the fastest round trip to Redis, by which two
 * processes may map one instant differently); later, it gives the slot up and reserves a new one
 * rather than crowd the next caller's slot. A window of w seconds then holds at most floor(w × rate) + 1
 * actual sends too, when w × rate is whole. Timers cannot keep within a millisecond or so, so the
 * allowance is never below `maxLatenessMs` (4 ms by default): that keeps the exact bound up to 200/s
 * and gives floor((w + 4 ms) × rate) + 1 above (10,005 sends in 10 s at 1,000/s instead of 10,001).
 *
 * Under backlog, reservations follow each other exactly one interval apart, and a refused reservation
 * (`maxWaitMs`) writes nothing, so contention costs no capacity. Limits reserved together leave no idle
 * gaps behind (see the holes in send-pacer-script.ts), so a slow chat cannot waste a bot's overall rate.
 *
 * Why not rate-limiter-flexible (already used for the API's per-key limit): its Redis limiters count in
 * fixed windows, so two windows' worth can go out around a boundary (2× over any window spanning it);
 * `execEvenly` only delays the caller on its own clock from the count within the current window, so it
 * neither spaces callers of different processes nor smooths the boundary; `RateLimiterQueue` is a queue
 * per process over the same fixed windows; `BurstyRateLimiter` and `RateLimiterUnion` combine fixed
 * windows, and the union consumes every limit even when another refuses, so refusals eat capacity.
 * None reserves a future slot on several limits atomically.
 *
 * Redis unreachable or slow: the reservation fails with `SendPacerUnavailable` (fast: the client must
 * not queue offline and must time commands out, as `createRedis` does). Nothing is ever sent unpaced:
 * the caller paces locally at its share of the rate instead (send-pacer-local.ts, activities/pacing.ts)
 * until Redis answers again. A reservation whose answer was lost still holds its slot, which
 * only costs capacity. Redis keeps no pacing state across a restart: reservations granted before it
 * (at most `maxWaitMs` ahead) may then coincide with new ones, once.
 *
 * Limits reserved together must live on one Redis node (one script touches all their keys).
 */
export interface PaceLimit {
  /** What is limited, e.g. `email:ses:eu-west-1`, `telegram:bot123`, `telegram:bot123:chat456`. */
  key: string;
  ratePerSecond: number;
  /** Extra reservations allowed back to back after an idle spell; 0 (strict spacing) by default. */
  burst?: number;
}

export interface ReserveOptions {
  /** Refuse, reserving nothing, when the earliest slot is further away than this. */
  maxWaitMs?: number;
}

export interface AcquireOptions extends ReserveOptions {
  /** Stops the wait: `acquire` rejects with an AbortError, and the slot goes unused. */
  signal?: AbortSignal;
}

export type Reservation =
  /** `waitMs` from the answer until the slot; `sendAt` is that instant on this process's clock (epoch ms). */
  | { granted: true; waitMs: number; sendAt: number }
  /** The earliest moment a new attempt with the same `maxWaitMs` could be granted, from now. */
  | { granted: false; retryAfterMs: number };

export interface SendPacerOptions {
  /** Namespaces the keys (deployments and tests sharing one Redis), like `TASK_QUEUE_PREFIX`. */
  prefix: string;
  /**
   * How late `acquire` may always be and still use its slot, beyond the one interval the exact bound
   * allows; 4 ms by default (see the bound above). 0 makes the bound exact at every rate, at a cost in
   * throughput above a few hundred sends per second, where timers cannot keep within one interval.
   */
  maxLatenessMs?: number;
  /**
   * A clock (epoch ms) shared by the pacer and its callers, such as a simulated one in tests of the
   * schedule; by default the Redis server's clock, mapped onto each process's own.
   */
  now?: () => number;
}

type Booked = { granted: true; slot: number; at: number };
type Refused = Extract<Reservation, { granted: false }>;

/** Pacing state could not be read or written; nothing was sent. Transient: retry later. */
export class SendPacerUnavailable extends Error {
  constructor(cause: unknown) {
    super(`send pacer unavailable: ${cause instanceof Error ? cause.message : String(cause)}`, { cause });
    this.name = 'SendPacerUnavailable';
  }
}

const DEFAULT_MAX_LATENESS_MS = 4;

/** How long idle pacing keys outlive their last reservation's slot. */
const IDLE_GRACE_MS = 1_000;

export class SendPacer {
  private readonly prefix: string;
  private readonly now?: () => number;
  private readonly maxLatenessMs: number;
  private readonly clock: ServerClock;
  private givenUp = 0;

  constructor(
    private readonly redis: Redis,
    options: SendPacerOptions,
  ) {
    // A client that queues commands while disconnected would hang every send until Redis is back.
    if (redis.options.enableOfflineQueue !== false || !redis.options.commandTimeout) {
      throw new Error('the send pacer needs a Redis client that fails fast (see createRedis)');
    }
    this.prefix = options.prefix;
    this.now = options.now;
    this.clock = new ServerClock(redis);
    this.maxLatenessMs = options.maxLatenessMs ?? DEFAULT_MAX_LATENESS_MS;
  }

  /** Reserves the earliest slot all `limits` allow, on all of them at once, and says how long to wait. */
  async reserve(limits: readonly PaceLimit[], options: ReserveOptions = {}): Promise<Reservation> {
    const booked = await this.book(limits, options);
    return booked.granted ? this.granted(booked) : booked;
  }

  /**
   * Reserves a slot and sleeps until it. A caller that finds itself too late for its slot (see the
   * bound above), whether it woke late or the answer came late, reserves again instead of sending;
   * a refusal returns at once, without sleeping.
   */
  async acquire(limits: readonly PaceLimit[], options: AcquireOptions = {}): Promise<Reservation> {
    const intervalMs = Math.min(...limits.map((limit) => intervalUs(limit.ratePerSecond) / 1_000));
    for (;;) {
      const booked = await this.book(limits, options);
      if (!booked.granted) return booked;
      const toleranceMs = Math.max(this.maxLatenessMs, intervalMs - this.clock.roundTripMs);
      const slot = performance.now() + booked.slot - booked.at;
      while (performance.now() < slot) await sleep(Math.ceil(slot - performance.now()), undefined, { signal: options.signal });
      if (performance.now() - slot < toleranceMs) return this.granted(booked);
      this.givenUp += 1;
    }
  }

  /** Slots `acquire` gave up because it was too late for them: a sign of a starved event loop. */
  get slotsGivenUp(): number {
    return this.givenUp;
  }

  /** The slot and the moment its answer was read, both on the caller's clock (`now`, else monotonic). */
  private async book(limits: readonly PaceLimit[], options: ReserveOptions): Promise<Booked | Refused> {
    const nowMs = this.now?.();
    const args = reservationArgs(limits, options.maxWaitMs, nowMs);
    const keys = limits.flatMap(({ key }) => [`${this.prefix}pace:${key}`, `${this.prefix}pace:${key}:holes`]);
    const [granted, waitUs, serverNowUs] = await this.unavailableOnError(async () => {
      if (nowMs === undefined) await this.clock.ready();
      return this.run(keys, args);
    });
    if (!granted) return { granted: false, retryAfterMs: Math.max(0, waitUs / 1_000 - (options.maxWaitMs ?? 0)) };
    if (nowMs !== undefined) return { granted: true, slot: nowMs + waitUs / 1_000, at: nowMs };
    const at = performance.now();
    this.clock.observe(serverNowUs / 1_000, at);
    return { granted: true, slot: this.clock.toLocal((serverNowUs + waitUs) / 1_000), at };
  }

  private granted({ slot, at }: Booked): Reservation {
    const waitMs = Math.max(0, slot - at);
    return { granted: true, waitMs, sendAt: this.now ? slot : Date.now() + waitMs };
  }

  private async run(keys: string[], args: string[]): Promise<[number, number, number]> {
    try {
      return (await this.redis.evalsha(RESERVE_SCRIPT_SHA, keys.length, ...keys, ...args)) as [number, number, number];
    } catch (error) {
      // Redis forgets scripts on restart; EVAL loads it again for the next EVALSHA.
      if (!(error instanceof Error && error.message.startsWith('NOSCRIPT'))) throw error;
      return (await this.redis.eval(RESERVE_SCRIPT, keys.length, ...keys, ...args)) as [number, number, number];
    }
  }

  private async unavailableOnError<T>(work: () => Promise<T>): Promise<T> {
    try {
      return await work();
    } catch (error) {
      throw new SendPacerUnavailable(error);
    }
  }
}

/** 1/rate in whole microseconds, rounded up so the pace is never faster than configured. */
function intervalUs(ratePerSecond: number): number {
  return Math.ceil(1_000_000 / ratePerSecond);
}

function reservationArgs(limits: readonly PaceLimit[], maxWaitMs: number | undefined, nowMs: number | undefined): string[] {
  if (limits.length === 0) throw new Error('a reservation needs at least one limit');
  if (new Set(limits.map(({ key }) => key)).size !== limits.length) throw new Error('each limit of a reservation must have its own key');
  if (maxWaitMs !== undefined && !(maxWaitMs >= 0 && Number.isFinite(maxWaitMs))) throw new Error(`invalid maxWaitMs ${maxWaitMs}`);
  for (const { key, ratePerSecond, burst = 0 } of limits) {
    if (!(ratePerSecond > 0 && Number.isFinite(ratePerSecond))) throw new Error(`invalid rate ${ratePerSecond} for ${key}`);
    if (!(Number.isInteger(burst) && burst >= 0)) throw new Error(`invalid burst ${burst} for ${key}`);
  }
  const shortest = Math.min(...limits.map(({ ratePerSecond }) => intervalUs(ratePerSecond)));
  const perLimit = limits.flatMap(({ ratePerSecond, burst = 0 }) => {
    const interval = intervalUs(ratePerSecond);
    return [String(interval), String(burst * interval), interval === shortest ? '1' : '0'];
  });
  const now = nowMs === undefined ? '' : String(Math.floor(nowMs * 1_000));
  const maxWait = maxWaitMs === undefined ? '-1' : String(Math.floor(maxWaitMs * 1_000));
  return [now, maxWait, String(IDLE_GRACE_MS), ...perLimit];
}
