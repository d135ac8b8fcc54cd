/**
 * NUL, and a UTF-16 surrogate without its other half. PostgreSQL refuses the first in text and jsonb
 * (SQLSTATE 22021), failing a statement far from the request that carried it; the second has no UTF-8
 * form, so the driver would silently store U+FFFD in its place. Percent-encoded bytes that are not UTF-8 never reach here: the query parser
 * keeps them as written, and the JSON parser turns them into U+FFFD.
 */
// eslint-disable-next-line no-control-regex -- NUL is exactly what this refuses
const UNSAFE = /\u0000|[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/;

export const UNSAFE_TEXT_MESSAGE = 'Contains a NUL character or an unpaired surrogate';

/**
 * The dotted path (`to.0`, `metadata.plan`) of the first string in a parsed JSON value or query that holds
 * unsafe text, or null when there is none. A bad key is reported at the object that holds it, so the answer
 * never echoes the key; the value itself is reported as the empty path. Iterative, like nestedDeeperThan,
 * so no depth overflows it.
 */
export function findUnsafeText(value: unknown): string | null {
  const pending: Array<{ value: unknown; path: string[]; unsafeKey?: boolean }> = [{ value, path: [] }];
  for (let next = pending.pop(); next; next = pending.pop()) {
    const { value: current, path } = next;
    if (next.unsafeKey) return path.slice(0, -1).join('.');
    if (typeof current === 'string') {
      if (UNSAFE.test(current)) return path.join('.');
      continue;
    }
    if (current === null || typeof current !== 'object') continue;
    const entries: Array<[string, unknown]> = Array.isArray(current) ? current.map((item, index) => [String(index), item]) : Object.entries(current);
    // Pushed in reverse so the first offending field in document order is the one reported.
    for (const [key, child] of entries.reverse()) pending.push({ value: child, path: [...path, key], unsafeKey: UNSAFE.test(key) });
  }
  return null;
}
