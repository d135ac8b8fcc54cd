import { decodeTimelineCursor, encodeTimelineCursor, readBefore, rowsPerSource, type TimelineCursor, type TimelineItem, timelinePage } from '../../core/timeline-cursor';

const item = (ms: number, key: string): TimelineItem => ({ at: new Date(ms), key });

/** Pages through `items` as the API does: each source is "read" below the cursor's millisecond, `rowsPerSource` deep. */
function pageThrough(sources: TimelineItem[][], limit: number): TimelineItem[] {
  const seen: TimelineItem[] = [];
  let cursor: TimelineCursor | null = null;
  for (let guard = 0; guard < 100; guard += 1) {
    const before = readBefore(cursor);
    const rows = rowsPerSource(cursor, limit);
    const read = sources.flatMap((source) =>
      source
        .filter((entry) => !before || entry.at < before)
        .sort((a, b) => b.at.getTime() - a.at.getTime())
        .slice(0, rows),
    );
    const { page, next } = timelinePage(read, cursor, limit);
    seen.push(...page);
    if (!next) return seen;
    cursor = decodeTimelineCursor(encodeTimelineCursor(next));
  }
  throw new Error('did not end');
}

describe('paging a merged timeline', () => {
  it('newest first, ties within a millisecond by key, and the next cursor null when nothing is left', () => {
    const { page, next } = timelinePage([item(1, 'b'), item(3, 'a'), item(1, 'a')], null, 3);
    expect(page.map((entry) => `${entry.at.getTime()}${entry.key}`)).toEqual(['3a', '1a', '1b']);
    expect(next).toBeNull();
  });

  it('every page size gives every entry exactly once, ties spread over several pages and sources included', () => {
    const sources = [
      [item(10, 'a:1'), item(10, 'a:2'), item(10, 'a:3'), item(7, 'a:4'), item(1, 'a:5')],
      [item(10, 'b:1'), item(9, 'b:2'), item(7, 'b:3')],
      [item(10, 'c:1'), item(10, 'c:2'), item(2, 'c:3')],
    ];
    const all = timelinePage(sources.flat(), null, 100).page;
    for (const limit of [1, 2, 3, 4, 5, 11, 12]) {
      expect({ limit, keys: pageThrough(sources, limit).map((entry) => entry.key) }).toEqual({ limit, keys: all.map((entry) => entry.key) });
    }
  });

  it('a cursor reads back as it was given; anything else is no cursor', () => {
    const cursor = { at: 1_700_000_000_123, key: 'touch:abc', seen: 2 };
    expect(decodeTimelineCursor(encodeTimelineCursor(cursor))).toEqual(cursor);
    for (const text of ['', 'not-a-cursor', Buffer.from('[1,"k"]').toString('base64url'), Buffer.from('[1,"k",0]').toString('base64url'), Buffer.from('{"at":1}').toString('base64url')]) {
      expect({ text, cursor: decodeTimelineCursor(text) }).toEqual({ text, cursor: null });
    }
  });
});
