import type { Logger } from 'pino';
import { BURST_WINDOW_MS, classifyHit, type Hit, otherLinksNear } from '../../core/tracking/classification';
import { isContentRole } from '../../core/tracking/link-roles';
import { utmOf } from '../../core/tracking/link-urls';
import type { TrackedLink } from '../../core/tracking/tracked-html';
import type { TrackingEvent } from '../../db/repositories/tracking-events';

/** A pixel or redirect hit as it arrived, before classification. */
export interface PendingHit extends Omit<Hit, 'honeypot'> {
  messageId: string;
  /** The clicked link (clicks only). */
  link: TrackedLink | null;
  /** When the message was sent (epoch ms), for the timing rules of clicks. */
  sentAt: number | null;
}

export interface HitBufferOptions {
  /** Stores a batch (events and engagement together); throws when the database is away. */
  write: (events: TrackingEvent[]) => Promise<unknown>;
  logger: Logger;
  flushIntervalMs?: number;
  /** Rows per statement. */
  maxBatch?: number;
  /** Beyond this many waiting events (a long database outage) the oldest are dropped, and logged. */
  maxWaiting?: number;
  now?: () => number;
}

const MAX_USER_AGENT = 512;

const NO_UTM = { source: null, medium: null, campaign: null } as const;

/**
 * Every click on a tracked link is a touch (recorded when the click is human), whether or not its target
 * carries UTM parameters: a send with `disableUtm` still earns its orders and conversions (issue 32). The
 * target's utm_* values only fill the touch's source, medium and campaign.
 */
function touchOf(link: TrackedLink | undefined | null): TrackingEvent['touch'] {
  return link ? { url: link.canonicalUrl, ...(utmOf(link.target) ?? NO_UTM) } : null;
}

/**
 * Pixel and redirect hits, answered at once and stored in batches: each hit waits here until the burst
 * window after it has passed (so a scanner clicking several links within a second is seen whole before
 * any of its clicks is classified), is classified, and is written with the others of its batch in one
 * statement. A batch the database refuses stays and is tried again; `close` writes everything left.
 */
export class TrackingHitBuffer {
  private pending: PendingHit[] = [];
  private ready: TrackingEvent[] = [];
  /** Recent clicks per message: what the burst rule compares a click with. */
  private readonly recentClicks = new Map<string, Array<{ position: number; at: number }>>();
  private readonly timer: NodeJS.Timeout;
  private flushing: Promise<void> | null = null;
  private readonly now: () => number;
  private readonly maxBatch: number;
  private readonly maxWaiting: number;

  constructor(private readonly options: HitBufferOptions) {
    this.now = options.now ?? Date.now;
    this.maxBatch = options.maxBatch ?? 2_000;
    this.maxWaiting = options.maxWaiting ?? 200_000;
    this.timer = setInterval(() => void this.flush(), options.flushIntervalMs ?? 250);
    this.timer.unref();
  }

  record(hit: PendingHit): void {
    this.pending.push(hit);
    if (hit.kind === 'click' && hit.link) {
      const clicks = this.recentClicks.get(hit.messageId) ?? [];
      clicks.push({ position: hit.link.position, at: hit.at });
      this.recentClicks.set(hit.messageId, clicks);
    }
  }

  /** Hits waiting to be written (classified or not). */
  get waiting(): number {
    return this.pending.length + this.ready.length;
  }

  /** Classifies the hits whose burst window has passed (every hit when `all`), then writes what is ready. */
  flush(all = false): Promise<void> {
    this.flushing ??= this.flushOnce(all).finally(() => (this.flushing = null));
    return this.flushing;
  }

  /** Stops the timer and writes every hit, trying again until the deadline while the database refuses. */
  async close(deadlineMs = 10_000): Promise<void> {
    clearInterval(this.timer);
    const deadline = this.now() + deadlineMs;
    for (;;) {
      await this.flushing;
      await this.flush(true);
      if (this.waiting === 0) return;
      if (this.now() > deadline) {
        this.options.logger.error({ lost: this.waiting }, 'tracking hits could not be stored before shutdown');
        return;
      }
      await new Promise((resolve) => setTimeout(resolve, 200));
    }
  }

  private async flushOnce(all: boolean): Promise<void> {
    this.classifyDue(all);
    while (this.ready.length > 0) {
      const batch = this.ready.slice(0, this.maxBatch);
      try {
        await this.options.write(batch);
      } catch (err) {
        this.options.logger.warn({ err, waiting: this.waiting }, 'tracking hits not stored yet; will retry');
        this.dropOverflow();
        return;
      }
      this.ready = this.ready.slice(batch.length);
    }
  }

  private classifyDue(all: boolean): void {
    const cutoff = this.now() - BURST_WINDOW_MS;
    const due = all ? this.pending : this.pending.filter((hit) => hit.at <= cutoff);
    if (due.length === 0) return;
    this.pending = all ? [] : this.pending.filter((hit) => hit.at > cutoff);
    this.ready.push(...due.map((hit) => this.classified(hit)));
    this.forgetOldClicks(cutoff - BURST_WINDOW_MS);
  }

  private classified(hit: PendingHit): TrackingEvent {
    const link = hit.link;
    const clicks = this.recentClicks.get(hit.messageId) ?? [];
    const verdict = classifyHit(
      { ...hit, honeypot: link?.honeypot ?? false },
      { sentAt: hit.sentAt, otherLinksNearby: link ? otherLinksNear(clicks, { position: link.position, at: hit.at }) : 0 },
    );
    return {
      messageId: hit.messageId,
      type: hit.kind,
      ...verdict,
      linkUrl: link?.url ?? null,
      linkId: link?.linkId ?? null,
      linkRole: link?.role ?? null,
      isContent: link ? isContentRole(link.role) : false,
      touch: touchOf(link),
      at: new Date(hit.at),
      data: { userAgent: hit.userAgent.slice(0, MAX_USER_AGENT), ...(hit.method !== 'GET' && { method: hit.method }), ...(link && { target: link.target }) },
    };
  }

  /** Clicks older than every hit still waiting can no longer be anyone's neighbour. */
  private forgetOldClicks(before: number): void {
    for (const [messageId, clicks] of this.recentClicks) {
      const kept = clicks.filter((click) => click.at >= before);
      if (kept.length === 0) this.recentClicks.delete(messageId);
      else if (kept.length !== clicks.length) this.recentClicks.set(messageId, kept);
    }
  }

  private dropOverflow(): void {
    const excess = this.waiting - this.maxWaiting;
    if (excess <= 0) return;
    this.ready = this.ready.slice(excess);
    this.options.logger.error({ dropped: excess }, 'tracking hits dropped: the database has been away too long');
  }
}
