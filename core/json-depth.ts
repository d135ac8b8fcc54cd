/**
 * Whether a parsed JSON value nests objects and arrays deeper than `limit` levels (the value itself
 * being the first). Iterative, so it is safe on any depth: JSON.parse accepts 100,000 levels, while
 * every recursive step after it (zod, JSON.stringify, the request hash, jsonb binds) overflows the
 * stack on a few thousand.
 */
export function nestedDeeperThan(value: unknown, limit: number): boolean {
  const pending: Array<{ value: unknown; level: number }> = [{ value, level: 1 }];
  for (let next = pending.pop(); next; next = pending.pop()) {
    if (next.value === null || typeof next.value !== 'object') continue;
    if (next.level > limit) return true;
    const children: unknown[] = Array.isArray(next.value) ? next.value : Object.values(next.value);
    for (const child of children) pending.push({ value: child, level: next.level + 1 });
  }
  return false;
}
