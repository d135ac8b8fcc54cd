import { performance } from 'node:perf_hooks';
import type { Logger } from 'pino';
import { Gauge, type Registry } from 'prom-client';

export interface PacerFallbackDeps {
  /** Answers when Redis is reachable again (a PING), rejects while it is not. */
  probe: () => Promise<unknown>;
  /** Worker processes that beat lately (the worker registry); this one counts even before its first beat. */
  liveWorkers: () => Promise<number>;
  logger: Logger;
  metrics?: Registry;
  /** How often Redis is asked whether it is back while in fallback (1 s). */
  probeMs?: number;
  /** How often the live workers are counted again while in fallback (5 s). */
  shareRefreshMs?: number;
}

/**
 * Whether this worker paces on its own because Redis is unreachable, and at what share of each rate.
 *
 * Entered on the shared pacer's first failure and left on the first probe that Redis answers, at most one
 * probe a `probeMs` (never one per send); each switch sets `messaging_send_pacer_fallback` and writes one
 * log line. The share is 1 ÷ the live workers in the registry, counted on entering and again every
 * `shareRefreshMs`, so a worker that starts or dies during the outage changes the others' shares within
 * one refresh; when the database cannot answer, the last count stands.
 */
export class PacerFallback {
  private active = false;
  private probedAt = -Infinity;
  private countedAt = -Infinity;
  private counting?: Promise<void>;
  private workers = 1;
  private readonly gauge: Gauge;
  private readonly workersGauge: Gauge;
  private readonly probeMs: number;
  private readonly shareRefreshMs: number;

  constructor(private readonly deps: PacerFallbackDeps) {
    const registers = deps.metrics ? [deps.metrics] : [];
    this.gauge = new Gauge({ name: 'messaging_send_pacer_fallback', help: '1 while Redis is unreachable and this worker paces sends locally at its share of each rate', registers });
    this.workersGauge = new Gauge({ name: 'messaging_send_pacer_fallback_workers', help: 'Live workers the rates are shared between while pacing locally', registers });
    this.gauge.set(0);
    this.probeMs = deps.probeMs ?? 1_000;
    this.shareRefreshMs = deps.shareRefreshMs ?? 5_000;
  }

  get engaged(): boolean {
    return this.active;
  }

  /** This worker's share of every rate while in fallback. */
  get share(): number {
    return 1 / this.workers;
  }

  /** The shared pacer failed: pace locally from now on, until a probe finds Redis back. */
  async enter(cause: unknown): Promise<void> {
    if (!this.active) {
      this.active = true;
      this.probedAt = performance.now();
      this.gauge.set(1);
      await this.refreshShare(true);
      this.deps.logger.warn({ err: cause, liveWorkers: this.workers }, 'send pacer: Redis unreachable; pacing sends locally at this worker\'s share of each rate');
    }
    await this.refreshShare(false);
  }

  /**
   * Whether the shared pacer may be used again: at once outside the fallback; inside it, when a probe (at
   * most one a `probeMs`, whoever asks) finds Redis answering.
   */
  async recovered(): Promise<boolean> {
    if (!this.active) return true;
    if (performance.now() - this.probedAt < this.probeMs) return false;
    this.probedAt = performance.now();
    try {
      await this.deps.probe();
    } catch {
      return false;
    }
    if (this.active) {
      this.active = false;
      this.gauge.set(0);
      this.deps.logger.info('send pacer: Redis answers again; sends are paced by the shared pacer');
    }
    return true;
  }

  /** Counts the live workers again when the last count is older than `shareRefreshMs` (or `now`). */
  async refreshShare(now: boolean): Promise<void> {
    if (!now && performance.now() - this.countedAt < this.shareRefreshMs) return;
    this.counting ??= this.count().finally(() => {
      this.counting = undefined;
    });
    await this.counting;
  }

  private async count(): Promise<void> {
    try {
      this.workers = Math.max(1, await this.deps.liveWorkers());
      this.workersGauge.set(this.workers);
    } catch (err) {
      this.deps.logger.warn({ err, liveWorkers: this.workers }, 'send pacer: live workers could not be counted; keeping the last count');
    }
    this.countedAt = performance.now();
  }
}
