/**
 * Paging a timeline merged from several sources (a contact's journey): entries newest first, ties within a
 * millisecond broken by a key unique to each entry, and an opaque cursor naming the last entry given, so a
 * page never repeats or skips one, even when entries share a moment.
 */

/** Where a page ended: the last entry's moment (epoch ms) and key, and how many entries of that millisecond were given so far. */
export interface TimelineCursor {
  at: number;
  key: string;
  /** Entries at exactly `at` already given: each source reads this many more rows, so it still has a page after them. */
  seen: number;
}

export interface TimelineItem {
  at: Date;
  /** Unique among the timeline's entries (type and row id). */
  key: string;
}

export function encodeTimelineCursor(cursor: TimelineCursor): string {
  return Buffer.from(JSON.stringify([cursor.at, cursor.key, cursor.seen])).toString('base64url');
}

/** The cursor a page answered, or null for anything else (a tampered or truncated one). */
export function decodeTimelineCursor(text: string): TimelineCursor | null {
  try {
    const value: unknown = JSON.parse(Buffer.from(text, 'base64url').toString('utf8'));
    if (!Array.isArray(value) || value.length !== 3) return null;
    const [at, key, seen] = value as unknown[];
    if (!Number.isSafeInteger(at) || typeof key !== 'string' || key.length > 200 || !Number.isSafeInteger(seen) || (seen as number) < 1) return null;
    return { at: at as number, key, seen: seen as number };
  } catch {
    return null;
  }
}

const newestFirst = (a: TimelineItem, b: TimelineItem) => b.at.getTime() - a.at.getTime() || (a.key < b.key ? -1 : a.key > b.key ? 1 : 0);

const isAfter = (item: TimelineItem, cursor: TimelineCursor) => item.at.getTime() < cursor.at || (item.at.getTime() === cursor.at && item.key > cursor.key);

/**
 * One page of `items` (every source's rows before the cursor's millisecond ends, each source read
 * `rowsPerSource` deep): sorted newest first, those up to the cursor dropped, `limit` kept. The next cursor
 * is null when nothing is left after the page.
 */
export function timelinePage<T extends TimelineItem>(items: readonly T[], cursor: TimelineCursor | null, limit: number): { page: T[]; next: TimelineCursor | null } {
  const fresh = (cursor ? items.filter((item) => isAfter(item, cursor)) : [...items]).sort(newestFirst);
  const page = fresh.slice(0, limit);
  const last = page.at(-1);
  if (!last || fresh.length <= limit) return { page, next: null };
  const at = last.at.getTime();
  const sameMoment = page.filter((item) => item.at.getTime() === at).length;
  return { page, next: { at, key: last.key, seen: cursor?.at === at ? cursor.seen + sameMoment : sameMoment } };
}

/** How many rows each source reads for a page after `cursor`: enough to fill it after the entries already given, and one more to know whether more follow. */
export function rowsPerSource(cursor: TimelineCursor | null, limit: number): number {
  return limit + (cursor?.seen ?? 0) + 1;
}

/** The exclusive upper bound each source reads below: the end of the cursor's millisecond. */
export function readBefore(cursor: TimelineCursor | null): Date | undefined {
  return cursor ? new Date(cursor.at + 1) : undefined;
}
