import { createHash } from 'node:crypto';

/**
 * A UUID (version 8) named by its parts: the same parts give the same id, so a row keyed by it is written
 * once however often the same fact arrives (a provider repeating a callback). Not in core/ids.ts, which
 * workflows import: their bundle has no node:crypto.
 */
export function nameBasedUuid(...parts: string[]): string {
  const hash = createHash('sha256').update(parts.join('\u0000')).digest();
  hash[6] = (hash[6] & 0x0f) | 0x80;
  hash[8] = (hash[8] & 0x3f) | 0x80;
  const hex = hash.subarray(0, 16).toString('hex');
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}`;
}
