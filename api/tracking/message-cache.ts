import { LRUCache } from 'lru-cache';
import type { TrackedMessage } from '../../db/repositories/message-links';

/**
 * The link tables of recently clicked messages, in process, so a click needs no database read once its
 * message has been seen. Safe to keep: a message's link table and its send time never change once
 * written. A message not sent yet (its send time may appear any moment) is kept only briefly, and so is an
 * unknown one. Concurrent misses of one message share one read.
 */
export class TrackedMessageCache {
  private readonly entries: LRUCache<string, { value: TrackedMessage | null }>;
  private readonly loading = new Map<string, Promise<TrackedMessage | null>>();

  constructor(
    private readonly load: (messageId: string) => Promise<TrackedMessage | null>,
    private readonly ttl: { sentMs: number; unsettledMs: number } = { sentMs: 60 * 60_000, unsettledMs: 1_000 },
    max = 20_000,
  ) {
    this.entries = new LRUCache({ max, ttl: ttl.sentMs, ttlAutopurge: false });
  }

  async get(messageId: string): Promise<TrackedMessage | null> {
    const cached = this.entries.get(messageId);
    if (cached) return cached.value;
    let pending = this.loading.get(messageId);
    if (!pending) {
      pending = this.load(messageId).finally(() => this.loading.delete(messageId));
      this.loading.set(messageId, pending);
      const value = await pending;
      this.entries.set(messageId, { value }, { ttl: value?.sentAt ? this.ttl.sentMs : this.ttl.unsettledMs });
      return value;
    }
    return pending;
  }
}
