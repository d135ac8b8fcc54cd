import type { Logger } from 'pino';
import { inLanes } from '../core/lanes';

/**
 * The loop every outbox drain shares (workers/dispatcher.ts, webhook-dispatcher.ts, inbox/dispatcher.ts): the
 * outbox in Postgres is the queue and Temporal holds only what a round handed over. Each drain configures what
 * a round claims and how it hands rows over; the loop runs rounds back to back while they find work, backs off
 * for `intervalMs` when one does not, survives a failed round (Postgres or Temporal away), and ends after the
 * round in progress when stopped (the worker's SIGTERM handler calls `stop`).
 */
export interface OutboxLoopOptions {
  /** The drain's name in its log lines ("dispatcher: round failed; retrying"). */
  name: string;
  logger: Logger;
  /** The back-off after a round that found nothing (or failed). */
  intervalMs: number;
  /** Claims a batch and hands it over; answers how many rows went. */
  round: () => Promise<number>;
  /**
   * Whether the next round follows at once after one that handed over this many rows: by default when any
   * went, since a round is bounded and more may be waiting.
   */
  more?: (handedOver: number) => boolean;
}

export interface OutboxLoop {
  /** Ends the loop after the round in progress, which is awaited. */
  stop: () => Promise<void>;
  /**
   * Something was just written to the outbox: the next round starts now rather than after the back-off
   * (at once if the loop is backing off; right after the round in progress otherwise, which may have
   * claimed before the write).
   */
  wake: () => void;
}

const atLeastOne = (handedOver: number) => handedOver > 0;

export function runOutboxLoop(options: OutboxLoopOptions): OutboxLoop {
  let running = true;
  let woken = false;
  let endBackOff: (() => void) | null = null;
  const more = options.more ?? atLeastOne;
  const backOff = () =>
    new Promise<void>((resolve) => {
      const timer = setTimeout(resolve, options.intervalMs);
      endBackOff = () => {
        clearTimeout(timer);
        resolve();
      };
    }).finally(() => (endBackOff = null));
  const loop = (async () => {
    while (running) {
      woken = false;
      let handedOver = 0;
      try {
        handedOver = await options.round();
      } catch (err) {
        options.logger.warn({ err }, `${options.name}: round failed; retrying`);
      }
      // Not once stopped: a stop during the round found no back-off to end, and must not wait one out.
      if (running && !more(handedOver) && !woken) await backOff();
    }
  })();
  return {
    stop: async () => {
      running = false;
      endBackOff?.();
      await loop;
    },
    wake: () => {
      woken = true;
      endBackOff?.();
    },
  };
}

/**
 * Hands each claimed item over (a workflow start), `concurrency` at a time, and answers the ones that went.
 * A failed start is reported and left claimed: its lease (or the round's transaction) keeps it until a later
 * round, so one refused start never costs the others theirs.
 */
export async function handOver<T>(
  items: readonly T[],
  concurrency: number,
  start: (item: T) => Promise<void>,
  onFailure: (err: unknown, item: T) => void,
): Promise<T[]> {
  const started: T[] = [];
  await inLanes(items, concurrency, async (item) => {
    try {
      await start(item);
      started.push(item);
    } catch (err) {
      onFailure(err, item);
    }
  });
  return started;
}

/**
 * Runs `work` while `renew` extends the lease of its rows every `everyMs`, so a lease can be short (a dead
 * round's rows free fast) without a slow Temporal costing a live round its rows. A failed renewal is ignored:
 * the next one, or the next round, catches up.
 */
export async function whileLeased<T>(everyMs: number, renew: () => Promise<unknown>, work: () => Promise<T>): Promise<T> {
  const renewal = setInterval(() => {
    renew().catch(() => undefined);
  }, everyMs);
  try {
    return await work();
  } finally {
    clearInterval(renewal);
  }
}
