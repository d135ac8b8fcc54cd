import { createHmac, createSecretKey, hkdfSync, type KeyObject, timingSafeEqual } from 'node:crypto';

/**
 * Signed tokens of the open pixel and click redirects. A token names a message and, for a click, the
 * position of the link in the message's stored link table; the signature (HMAC-SHA256 under a key
 * derived from MASTER_KEY, truncated to 128 bits) makes every other token a forgery. The token carries no
 * URL: a click goes only where the stored table says, so there is no open redirect to forge.
 */
export type TrackingTarget = { kind: 'open'; messageId: string } | { kind: 'click'; messageId: string; position: number };

const SIGNATURE_BYTES = 16;
const UUID_HEX = /^[0-9a-f]{32}$/;
const POSITION = /^(0|[1-9]\d{0,3})$/;

/**
 * A key of its own for tracking, so a leaked tracking key reveals nothing about MASTER_KEY's other uses.
 * A KeyObject, made once: HMAC with a raw Buffer imports the key again on every hit.
 */
export function trackingKey(masterKey: Buffer): KeyObject {
  return createSecretKey(Buffer.from(hkdfSync('sha256', masterKey, Buffer.alloc(0), 'messaging tracking tokens v1', 32)));
}

/** The tracking keys of every key of the ring (`macKeys`): links of emails sent before a rotation keep working. */
export function trackingKeys(masterKeys: readonly Buffer[]): KeyObject[] {
  return masterKeys.map(trackingKey);
}

function payloadOf(target: TrackingTarget): string {
  const id = target.messageId.replace(/-/g, '').toLowerCase();
  return target.kind === 'open' ? `${id}.o` : `${id}.${target.position}`;
}

function signature(key: KeyObject, payload: string): Buffer {
  return createHmac('sha256', key).update(payload).digest().subarray(0, SIGNATURE_BYTES);
}

export function signTrackingToken(key: KeyObject, target: TrackingTarget): string {
  const payload = payloadOf(target);
  return `${payload}.${signature(key, payload).toString('base64url')}`;
}

function uuidOf(hex: string): string {
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}`;
}

/** The target of a genuine token, or null for anything else (malformed, altered, signed with no key of the ring). */
export function verifyTrackingToken(keys: readonly KeyObject[], token: string): TrackingTarget | null {
  const parts = token.split('.');
  if (parts.length !== 3) return null;
  const [hex, which, signed] = parts;
  if (!UUID_HEX.test(hex) || (which !== 'o' && !POSITION.test(which))) return null;
  // Compared as text: base64 decoding ignores stray bits, so two spellings could decode alike.
  const given = Buffer.from(signed);
  const genuine = keys.some((key) => {
    const expected = Buffer.from(signature(key, `${hex}.${which}`).toString('base64url'));
    return given.length === expected.length && timingSafeEqual(given, expected);
  });
  if (!genuine) return null;
  const messageId = uuidOf(hex);
  return which === 'o' ? { kind: 'open', messageId } : { kind: 'click', messageId, position: Number(which) };
}
