import { createHmac, hkdfSync, timingSafeEqual } from 'node:crypto';

/** What an estimate confirmed: one campaign as it stood at one revision, until a moment. */
export interface ConfirmationClaims {
  campaignId: string;
  /** The campaign's revision when it was estimated; every edit moves it on. */
  revision: number;
  expiresAt: Date;
}

export interface ConfirmationTokens {
  sign: (claims: ConfirmationClaims) => string;
  /** The claims of a genuine token, or null for a forged, altered or malformed one (expiry is the caller's). */
  read: (token: string) => ConfirmationClaims | null;
}

const VERSION = 1;
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;
const PAYLOAD_BYTES = 1 + 16 + 4 + 8;
const MAC_BYTES = 32;
const TOKEN_BYTES = PAYLOAD_BYTES + MAC_BYTES;

const uuidText = (bytes: Buffer): string => {
  const hex = bytes.toString('hex');
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}`;
};

/**
 * The confirmation token of a campaign estimate (decisions: needed to send now or within five minutes,
 * valid ten minutes and only for the campaign state it estimated). Stateless: it names the campaign, the
 * revision it saw and its expiry, with an HMAC-SHA256 keyed from MASTER_KEY under a label of its own, so
 * no one can make one and an edit (which moves the revision) voids every token issued before it. Every key
 * of the ring verifies (current first: it signs), so a rotation does not void a token in its ten minutes.
 *
 * Token: base64url of [version][campaign uuid][revision, 4 bytes][expiry in ms, 8 bytes][MAC of those].
 */
export function confirmationTokens(masterKeys: readonly Buffer[]): ConfirmationTokens {
  const keys = masterKeys.map((masterKey) => Buffer.from(hkdfSync('sha256', masterKey, Buffer.alloc(0), 'messaging campaign confirmation v1', 32)));
  if (keys.length === 0) throw new Error('confirmation tokens need a key');
  const mac = (key: Buffer, payload: Buffer) => createHmac('sha256', key).update(payload).digest();

  return {
    sign(claims) {
      if (!UUID.test(claims.campaignId)) throw new Error('confirmation claims need a campaign uuid');
      const payload = Buffer.alloc(PAYLOAD_BYTES);
      payload[0] = VERSION;
      Buffer.from(claims.campaignId.replace(/-/g, ''), 'hex').copy(payload, 1);
      payload.writeUInt32BE(claims.revision, 17);
      payload.writeBigUInt64BE(BigInt(claims.expiresAt.getTime()), 21);
      return Buffer.concat([payload, mac(keys[0], payload)]).toString('base64url');
    },

    read(token) {
      if (token.length > 2 * TOKEN_BYTES) return null;
      const bytes = Buffer.from(token, 'base64url');
      // Node's decoder skips characters outside the alphabet: only the canonical spelling is accepted.
      if (bytes.length !== TOKEN_BYTES || bytes[0] !== VERSION || bytes.toString('base64url') !== token) return null;
      const payload = bytes.subarray(0, PAYLOAD_BYTES);
      const given = bytes.subarray(PAYLOAD_BYTES);
      if (!keys.some((key) => timingSafeEqual(given, mac(key, payload)))) return null;
      return {
        campaignId: uuidText(payload.subarray(1, 17)),
        revision: payload.readUInt32BE(17),
        expiresAt: new Date(Number(payload.readBigUInt64BE(21))),
      };
    },
  };
}
