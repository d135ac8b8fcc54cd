import { createHash, randomInt } from 'node:crypto';

/**
 * API keys are `sk_` followed by random base62 characters (decisions: at least 32). Only the SHA-256
 * hash and a short display prefix are stored; the key itself is shown once.
 */
const KEY_PREFIX = 'sk_';
const RANDOM_LENGTH = 40;
const DISPLAY_LENGTH = KEY_PREFIX.length + 8;
const BASE62 = '0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz';
const KEY_PATTERN = /^sk_[0-9A-Za-z]{32,}$/;

export interface GeneratedKey {
  key: string;
  hash: string;
  displayPrefix: string;
}

export function generateApiKey(): GeneratedKey {
  let random = '';
  // randomInt draws without modulo bias, so every base62 character is equally likely.
  for (let i = 0; i < RANDOM_LENGTH; i += 1) random += BASE62[randomInt(BASE62.length)];
  const key = KEY_PREFIX + random;
  return { key, hash: hashApiKey(key), displayPrefix: displayPrefix(key) };
}

export function hashApiKey(key: string): string {
  return createHash('sha256').update(key).digest('hex');
}

export function displayPrefix(key: string): string {
  return key.slice(0, DISPLAY_LENGTH);
}

/** Cheap shape check before any lookup, so garbage tokens never reach the database. */
export function looksLikeApiKey(token: string): boolean {
  return KEY_PATTERN.test(token);
}

/** Reads the key from an `Authorization: Bearer sk_...` header value; null when absent or malformed. */
export function bearerToken(header: string | undefined): string | null {
  if (!header) return null;
  const match = /^Bearer\s+(\S+)\s*$/i.exec(header);
  return match ? match[1] : null;
}
