import { createHmac, hkdfSync, timingSafeEqual } from 'node:crypto';

/** Whom a one-click unsubscribe link speaks for: one recipient address of one message of one workspace. */
export interface UnsubscribeClaims {
  workspaceId: string;
  messageId: string;
  address: string;
}

/** What a well-formed token names. It is genuine only if `recipient` finds the address its MAC was made for. */
export interface UnsubscribeLink {
  workspaceId: string;
  messageId: string;
  /** Which of the message's recipient addresses the token was signed for, or null: a forged or altered token. */
  recipient: (addresses: readonly string[]) => string | null;
}

export interface UnsubscribeTokens {
  sign: (claims: UnsubscribeClaims) => string;
  read: (token: string) => UnsubscribeLink | null;
}

/** Links signed before v2 (issue 29): checkable only against the message's recipients, a database read. */
const LEGACY_VERSION = 1;
const VERSION = 2;
const UUID_BYTES = 16;
const PAYLOAD_BYTES = 1 + 2 * UUID_BYTES;
const LEGACY_MAC_BYTES = 32;
const TAG_BYTES = 16;
const TOKEN_BYTES = PAYLOAD_BYTES + 2 * TAG_BYTES;
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

const uuidBytes = (uuid: string): Buffer => Buffer.from(uuid.replace(/-/g, ''), 'hex');
const uuidText = (bytes: Buffer): string => {
  const hex = bytes.toString('hex');
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}`;
};

const derive = (masterKey: Buffer, label: string) => Buffer.from(hkdfSync('sha256', masterKey, Buffer.alloc(0), label, 32));

/**
 * Unsubscribe links name their workspace and message in the clear, with a tag binding the recipient's
 * address. The address itself stays out of the URL (URLs end up in logs, proxies and link scanners): the
 * endpoint reads the message's recipients and keeps the one the tag was made for. No one can make a link
 * for a message or address we did not send to, and no lookup table is needed.
 *
 * A second tag covers everything before it, so a made-up or altered link is refused before the database
 * is asked for the message's recipients: anyone on the internet can send links, and each would otherwise
 * cost a read. Version 1 links (a single MAC over the payload and the address) can only be checked after
 * that read; they are refused unless `acceptV1` (UNSUBSCRIBE_V1_LINKS) is set for a deployment that sent
 * them.
 *
 * Keys are derived from MASTER_KEY (HKDF, labels of their own), so a tag never shares a key with the
 * sealing of secrets. Links do not expire: RFC 8058 senders honour them as long as the mail may be read,
 * so every key of the ring verifies (`macKeys`, current first: it signs): a rotation breaks no link sent.
 *
 * Token v2: base64url of [2][workspace uuid][message uuid][address tag][token tag], tags HMAC-SHA256
 * truncated to 128 bits: address tag over the payload and the address, token tag over all before it.
 */
export function unsubscribeTokens(masterKeys: readonly Buffer[], options: { acceptV1?: boolean } = {}): UnsubscribeTokens {
  if (masterKeys.length === 0) throw new Error('unsubscribe tokens need a key');
  const rings = masterKeys.map((masterKey) => ({
    addressKey: derive(masterKey, 'messaging unsubscribe link v2 address'),
    tokenKey: derive(masterKey, 'messaging unsubscribe link v2 token'),
    legacyKey: derive(masterKey, 'messaging unsubscribe link v1'),
  }));
  type Ring = (typeof rings)[number];
  // Addresses compare case-insensitively: the tag does not depend on how a header spelt the address.
  const addressTag = (ring: Ring, payload: Buffer, address: string) =>
    createHmac('sha256', ring.addressKey).update(payload).update(address.toLowerCase(), 'utf8').digest().subarray(0, TAG_BYTES);
  const tokenTag = (ring: Ring, signed: Buffer) => createHmac('sha256', ring.tokenKey).update(signed).digest().subarray(0, TAG_BYTES);
  const legacyMac = (ring: Ring, payload: Buffer, address: string) =>
    createHmac('sha256', ring.legacyKey).update(payload).update(address.toLowerCase(), 'utf8').digest();

  const linkOf = (payload: Buffer, matches: (address: string) => boolean): UnsubscribeLink => ({
    workspaceId: uuidText(payload.subarray(1, 1 + UUID_BYTES)),
    messageId: uuidText(payload.subarray(1 + UUID_BYTES, PAYLOAD_BYTES)),
    recipient: (addresses) => addresses.find(matches) ?? null,
  });

  return {
    sign(claims) {
      if (!UUID.test(claims.workspaceId) || !UUID.test(claims.messageId)) throw new Error('unsubscribe claims need uuids');
      if (!claims.address) throw new Error('unsubscribe claims need an address');
      const payload = Buffer.concat([Buffer.from([VERSION]), uuidBytes(claims.workspaceId), uuidBytes(claims.messageId)]);
      const signed = Buffer.concat([payload, addressTag(rings[0], payload, claims.address)]);
      return Buffer.concat([signed, tokenTag(rings[0], signed)]).toString('base64url');
    },

    read(token) {
      if (token.length > 2 * TOKEN_BYTES) return null;
      const bytes = Buffer.from(token, 'base64url');
      // Node's decoder skips characters outside the alphabet: only the canonical spelling is accepted.
      if (bytes.length !== TOKEN_BYTES || bytes.toString('base64url') !== token) return null;
      const payload = bytes.subarray(0, PAYLOAD_BYTES);
      if (bytes[0] === VERSION) {
        const signed = bytes.subarray(0, PAYLOAD_BYTES + TAG_BYTES);
        // The key whose token tag matches made the link; its address tag is checked with the same key.
        const ring = rings.find((candidate) => timingSafeEqual(tokenTag(candidate, signed), bytes.subarray(PAYLOAD_BYTES + TAG_BYTES)));
        if (!ring) return null;
        const given = bytes.subarray(PAYLOAD_BYTES, PAYLOAD_BYTES + TAG_BYTES);
        return linkOf(payload, (address) => timingSafeEqual(given, addressTag(ring, payload, address)));
      }
      if (bytes[0] === LEGACY_VERSION && options.acceptV1) {
        const given = bytes.subarray(PAYLOAD_BYTES, PAYLOAD_BYTES + LEGACY_MAC_BYTES);
        return linkOf(payload, (address) => rings.some((ring) => timingSafeEqual(given, legacyMac(ring, payload, address))));
      }
      return null;
    },
  };
}
