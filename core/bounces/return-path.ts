import { createHmac, hkdfSync, timingSafeEqual } from 'node:crypto';
import { parseMailboxes } from '../addresses';

/** Whose bounce a VERP return path collects: one recipient (by its place in the envelope) of one message. */
export interface ReturnPathClaims {
  messageId: string;
  /** The recipient's index among the message's to, cc and bcc addresses, in that order, as sent. */
  recipientIndex: number;
}

export interface ReturnPathTokens {
  sign: (claims: ReturnPathClaims) => string;
  /** The claims of a genuine token; null for a forged, altered or malformed one. */
  read: (token: string) => ReturnPathClaims | null;
}

/** The local part before the token: `bounces+<token>@<return-path domain>`. */
export const RETURN_PATH_PREFIX = 'bounces+';
/** The label of the bounce subdomain a domain publishes when it does not receive its own mail at our MX. */
export const BOUNCE_SUBDOMAIN = 'bounces';

const VERSION = 1;
const UUID_BYTES = 16;
const PAYLOAD_BYTES = 1 + UUID_BYTES + 1;
/** 80 bits: a forger must guess it online, one SMTP RCPT at a time. */
const TAG_BYTES = 10;
const TOKEN_BYTES = PAYLOAD_BYTES + TAG_BYTES;
const MAX_RECIPIENT_INDEX = 255;
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;
/** RFC 4648 base32, lower case: mail systems may fold the case of a local part, and base32 survives it. */
const ALPHABET = 'abcdefghijklmnopqrstuvwxyz234567';

export function base32(bytes: Buffer): string {
  let bits = 0;
  let value = 0;
  let text = '';
  for (const byte of bytes) {
    value = (value << 8) | byte;
    bits += 8;
    while (bits >= 5) {
      text += ALPHABET[(value >>> (bits - 5)) & 31];
      bits -= 5;
    }
  }
  if (bits > 0) text += ALPHABET[(value << (5 - bits)) & 31];
  return text;
}

export function fromBase32(text: string): Buffer | null {
  let bits = 0;
  let value = 0;
  const bytes: number[] = [];
  for (const char of text.toLowerCase()) {
    const digit = ALPHABET.indexOf(char);
    if (digit < 0) return null;
    value = ((value << 5) | digit) & 0xffff;
    bits += 5;
    if (bits >= 8) {
      bytes.push((value >>> (bits - 8)) & 0xff);
      bits -= 8;
    }
  }
  return Buffer.from(bytes);
}

const uuidText = (bytes: Buffer): string => {
  const hex = bytes.toString('hex');
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}`;
};

/**
 * VERP return-path tokens: the envelope sender of each message and recipient we send over SMTP, so a
 * bounce or complaint that comes back names whom it is about by the address it was sent to, whatever the
 * report inside says. The token carries the message id and the recipient's index in the clear with a
 * truncated HMAC over both, so the MX can refuse a made-up address at RCPT without a database read, and no
 * one can make an address that would bounce a message or recipient we did not send. 28 bytes in base32:
 * 45 characters, `bounces+` and the token fit the 64 octets of a local part (RFC 5321 §4.5.3.1.1).
 *
 * Keys are derived from MASTER_KEY (HKDF, a label of its own); every key of the ring verifies, the current
 * one signs, so a rotation loses no bounce of mail already sent.
 */
export function returnPathTokens(masterKeys: readonly Buffer[]): ReturnPathTokens {
  if (masterKeys.length === 0) throw new Error('return-path tokens need a key');
  const keys = masterKeys.map((masterKey) => Buffer.from(hkdfSync('sha256', masterKey, Buffer.alloc(0), 'messaging verp return path v1', 32)));
  const tag = (key: Buffer, payload: Buffer) => createHmac('sha256', key).update(payload).digest().subarray(0, TAG_BYTES);
  return {
    sign({ messageId, recipientIndex }) {
      if (!UUID.test(messageId)) throw new Error('return-path claims need a message uuid');
      if (!Number.isInteger(recipientIndex) || recipientIndex < 0 || recipientIndex > MAX_RECIPIENT_INDEX) throw new Error('recipient index out of range');
      const payload = Buffer.concat([Buffer.from([VERSION]), Buffer.from(messageId.replace(/-/g, ''), 'hex'), Buffer.from([recipientIndex])]);
      return base32(Buffer.concat([payload, tag(keys[0], payload)]));
    },
    read(token) {
      if (token.length > 2 * TOKEN_BYTES) return null;
      const bytes = fromBase32(token);
      // Only the canonical spelling (no trailing bits) is one token: a second spelling of it is refused.
      if (!bytes || bytes.length !== TOKEN_BYTES || base32(bytes) !== token.toLowerCase() || bytes[0] !== VERSION) return null;
      const payload = bytes.subarray(0, PAYLOAD_BYTES);
      const given = bytes.subarray(PAYLOAD_BYTES);
      if (!keys.some((key) => timingSafeEqual(tag(key, payload), given))) return null;
      return { messageId: uuidText(payload.subarray(1, 1 + UUID_BYTES)), recipientIndex: payload[PAYLOAD_BYTES - 1] };
    },
  };
}

/** The envelope sender that collects the bounces of one recipient of one message. */
export function returnPathAddress(token: string, domain: string): string {
  return `${RETURN_PATH_PREFIX}${token}@${domain}`;
}

/** The token of a `bounces+<token>@…` address (any domain), or null for any other address. */
export function returnPathTokenOf(address: string): string | null {
  const at = address.lastIndexOf('@');
  const local = at > 0 ? address.slice(0, at) : '';
  if (!local.toLowerCase().startsWith(RETURN_PATH_PREFIX)) return null;
  const token = local.slice(RETURN_PATH_PREFIX.length);
  return token.length > 0 ? token : null;
}

/** The bounce subdomain of a sending domain: where its return path receives when the domain itself does not. */
export const bounceDomainOf = (domain: string): string => `${BOUNCE_SUBDOMAIN}.${domain}`;

/**
 * The envelope recipients of a message in the order its return paths were signed: to, cc, bcc, each
 * stored mailbox (`Ann <ann@x.org>`) read as its address; what does not parse is no recipient.
 */
export function envelopeAddresses(to: readonly string[], cc: readonly string[], bcc: readonly string[]): string[] {
  return [...to, ...cc, ...bcc].flatMap((text) => {
    const parsed = parseMailboxes(text);
    return parsed.ok ? parsed.mailboxes.map((mailbox) => mailbox.address) : [];
  });
}

/** The checks of a domain's records, as the domain check stored them (core/domain-checks.ts). */
interface ReturnPathSource {
  name: string;
  inboundEnabled: boolean;
  recordChecks: ReadonlyArray<{ record: string; status: string }>;
}

/**
 * Where a sending domain's return paths live, or null to keep the From address as envelope sender. The
 * domain itself when it receives at our MX (inbound on, its MX checked); else its bounce subdomain once
 * that subdomain's MX (to our MX) and SPF records check. Until then VERP would send bounces to a name
 * that does not resolve (receivers that check the envelope sender's domain refuse such mail), so a
 * domain verified before bounce handling existed keeps sending exactly as it did.
 */
export function returnPathDomainOf(domain: ReturnPathSource): string | null {
  const verified = (record: string) => domain.recordChecks.some((check) => check.record === record && check.status === 'verified');
  if (domain.inboundEnabled && verified('mx')) return domain.name;
  if (verified('return_path_mx') && verified('return_path_spf')) return bounceDomainOf(domain.name);
  return null;
}
