import { createHmac, hkdfSync, timingSafeEqual } from 'node:crypto';

/**
 * The `/start <token>` deep link that ties a contact to a Telegram chat (docs/telegram.md): the app asks
 * `POST /contacts/:id/telegram-link` for `https://t.me/<bot>?start=<token>` and shows it to the signed-in
 * person; pressing Start in Telegram sends `/start <token>` from their chat, which verifies the contact's
 * Telegram identity. The token names the contact and an expiry in the clear, with an HMAC over those and
 * the workspace (so a token is good only for the bot of the workspace that made it). Telegram's start
 * parameter takes at most 64 characters of A-Z, a-z, 0-9, `_` and `-`: this is 50 (base64url of 37 bytes).
 * No table is needed, and a link can be made again at any time. Every key of the ring verifies (current
 * first: it signs), so a link shown just before a MASTER_KEY rotation still works.
 */
const VERSION = 1;
const UUID_BYTES = 16;
const MAC_BYTES = 16;
const PAYLOAD_BYTES = 1 + UUID_BYTES + 4;

const uuidBytes = (uuid: string): Buffer => Buffer.from(uuid.replace(/-/g, ''), 'hex');
const uuidText = (bytes: Buffer): string => {
  const hex = bytes.toString('hex');
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}`;
};

export interface TelegramLinkTokens {
  sign: (claims: { workspaceId: string; contactId: string; expiresAt: Date }) => string;
  /** The contact a token of this workspace names, or null: forged, altered, of another workspace, expired. */
  read: (workspaceId: string, token: string, now: Date) => string | null;
}

export function telegramLinkTokens(masterKeys: readonly Buffer[]): TelegramLinkTokens {
  const keys = masterKeys.map((masterKey) => Buffer.from(hkdfSync('sha256', masterKey, Buffer.alloc(0), 'messaging telegram link tokens v1', 32)));
  if (keys.length === 0) throw new Error('telegram link tokens need a key');
  const mac = (key: Buffer, workspaceId: string, payload: Buffer) => createHmac('sha256', key).update(uuidBytes(workspaceId)).update(payload).digest().subarray(0, MAC_BYTES);
  return {
    sign({ workspaceId, contactId, expiresAt }) {
      const payload = Buffer.alloc(PAYLOAD_BYTES);
      payload.writeUInt8(VERSION, 0);
      uuidBytes(contactId).copy(payload, 1);
      payload.writeUInt32BE(Math.floor(expiresAt.getTime() / 1000), 1 + UUID_BYTES);
      return Buffer.concat([payload, mac(keys[0], workspaceId, payload)]).toString('base64url');
    },
    read(workspaceId, token, now) {
      if (!/^[A-Za-z0-9_-]{1,64}$/.test(token)) return null;
      const bytes = Buffer.from(token, 'base64url');
      // Only the canonical spelling: 50 base64url characters carry 4 bits more than 37 bytes, which decoding ignores.
      if (bytes.toString('base64url') !== token) return null;
      if (bytes.length !== PAYLOAD_BYTES + MAC_BYTES || bytes.readUInt8(0) !== VERSION) return null;
      const payload = bytes.subarray(0, PAYLOAD_BYTES);
      const given = bytes.subarray(PAYLOAD_BYTES);
      if (!keys.some((key) => timingSafeEqual(mac(key, workspaceId, payload), given))) return null;
      if (payload.readUInt32BE(1 + UUID_BYTES) * 1000 <= now.getTime()) return null;
      return uuidText(payload.subarray(1, 1 + UUID_BYTES));
    },
  };
}

/** The token of a `/start <token>` message (Telegram sends the deep link's parameter this way), or null. */
export function startToken(text: string | null): string | null {
  const match = /^\/start(?:@\w+)? ([A-Za-z0-9_-]{1,64})$/.exec(text?.trim() ?? '');
  return match ? match[1] : null;
}
