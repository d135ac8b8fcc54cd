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

const VERSION = 1;
const UUID_BYTES = 16;
const MAC_BYTES = 32;
const PAYLOAD_BYTES = 1 + 2 * UUID_BYTES;
const TOKEN_BYTES = PAYLOAD_BYTES + MAC_BYTES;
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

const uuidBytes = (uuid: string): Buffer => Buffer.from(uuid.replace(/-/g, ''), 'hex');
const uuidText = (bytes: Buffer): string => {
  const hex = bytes.toString('hex');
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}`;
};

/**
 * Unsubscribe links name their workspace and message in the clear, with an HMAC-SHA256 over those and the
 * recipient's address. The address itself stays out of the URL (URLs end up in logs, proxies and link
 * scanners): the endpoint reads the message's recipients and keeps the one the MAC was made for. No one
 * can make a link for a message or address we did not send to, and no lookup table is needed.
 *
 * The key is derived from MASTER_KEY (HKDF, a label of its own), so a MAC never shares a key with the
 * sealing of secrets. Links do not expire: RFC 8058 senders honour them as long as the mail may be read,
 * so every key of the ring verifies (`macKeys`, current first: it signs): a rotation breaks no link sent.
 *
 * Token: base64url of [version][workspace uuid][message uuid][MAC over the first three and the address].
 */
export function unsubscribeTokens(masterKeys: readonly Buffer[]): UnsubscribeTokens {
  const keys = masterKeys.map((masterKey) => Buffer.from(hkdfSync('sha256', masterKey, Buffer.alloc(0), 'messaging unsubscribe link v1', 32)));
  if (keys.length === 0) throw new Error('unsubscribe tokens need a key');
  // Addresses compare case-insensitively: the MAC does not depend on how a header spelt the address.
  const mac = (key: Buffer, payload: Buffer, address: string) => createHmac('sha256', key).update(payload).update(address.toLowerCase(), 'utf8').digest();

  return {
    sign(claims) {
      if (!UUID.test(claims.workspaceId) || !UUID.test(claims.messageId)) throw new Error('unsubscribe claims need uuids');
      if (!claims.address) throw new Error('unsubscribe claims need an address');
      const payload = Buffer.concat([Buffer.from([VERSION]), uuidBytes(claims.workspaceId), uuidBytes(claims.messageId)]);
      return Buffer.concat([payload, mac(keys[0], payload, claims.address)]).toString('base64url');
    },

    read(token) {
      if (token.length > 2 * TOKEN_BYTES) return null;
      const bytes = Buffer.from(token, 'base64url');
      // Node's decoder skips characters outside the alphabet: only the canonical spelling is accepted.
      if (bytes.length !== TOKEN_BYTES || bytes[0] !== VERSION || bytes.toString('base64url') !== token) return null;
      const payload = bytes.subarray(0, PAYLOAD_BYTES);
      const given = bytes.subarray(PAYLOAD_BYTES);
      return {
        workspaceId: uuidText(payload.subarray(1, 1 + UUID_BYTES)),
        messageId: uuidText(payload.subarray(1 + UUID_BYTES)),
        recipient: (addresses) => addresses.find((address) => keys.some((key) => timingSafeEqual(given, mac(key, payload, address)))) ?? null,
      };
    },
  };
}
