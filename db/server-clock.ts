import { performance } from 'node:perf_hooks';
import type { Redis } from 'ioredis';

/** How long a sample keeps counting; the estimate is the best of the last one to two such spans. */
const SPAN_MS = 5_000;
const PROBES = 3;

/**
 * The Redis server's clock mapped onto this process's monotonic clock, for waiting until an instant
 * Redis chose. (arrival here − server time) is the offset between the two clocks plus that answer's
 * trip back, so the smallest value seen lately is the offset plus the fastest trip: an instant mapped
 * with it is never early, and an answer that waited in a pipeline or behind a busy event loop makes
 * its wait shorter rather than its send later. "Lately" lets the estimate follow a server clock that
 * NTP slews. Each span opens with a few TIME round trips of its own, so the estimate never rests on
 * pipelined answers alone (the first answers of a batch wait for the rest of it).
 */
export class ServerClock {
  private current = Infinity;
  private previous = Infinity;
  private spanStartedAt = -Infinity;
  private fastestTrip = 0;
  private probing?: Promise<void>;

  constructor(private readonly redis: Redis) {}

  /** Resolves once the estimate is fresh; rejects with the Redis error when a probe fails. */
  async ready(): Promise<void> {
    if (performance.now() - this.spanStartedAt <= SPAN_MS) return;
    this.probing ??= this.probe().finally(() => {
      this.probing = undefined;
    });
    await this.probing;
  }

  observe(serverMs: number, receivedMs: number): void {
    this.current = Math.min(this.current, receivedMs - serverMs);
  }

  toLocal(serverMs: number): number {
    return serverMs + Math.min(this.current, this.previous);
  }

  /**
   * The fastest round trip of the latest probes. The return trip hidden in the estimate is shorter,
   * so two processes map one server instant at most this far apart.
   */
  get roundTripMs(): number {
    return this.fastestTrip;
  }

  private async probe(): Promise<void> {
    const samples: number[] = [];
    const trips: number[] = [];
    for (let i = 0; i < PROBES; i += 1) {
      const sent = performance.now();
      const [seconds, micros] = await this.redis.time();
      const received = performance.now();
      samples.push(received - (Number(seconds) * 1_000 + Number(micros) / 1_000));
      trips.push(received - sent);
    }
    this.previous = this.current;
    this.current = Math.min(...samples);
    this.fastestTrip = Math.min(...trips);
    this.spanStartedAt = performance.now();
  }
}
