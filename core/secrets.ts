import { createCipheriv, createDecipheriv, randomBytes } from 'node:crypto';

/**
 * Secrets at rest (DKIM private keys, provider credentials) are sealed with AES-256-GCM under the
 * deployment's MASTER_KEY. The version prefix leaves room to rotate the scheme or the key later.
 */
const VERSION = 'v1';
const IV_BYTES = 12;
const TAG_BYTES = 16;

const HEX_KEY = /^[0-9a-f]{64}$/i;
// Exactly the 43 characters (and optional padding) that 32 bytes encode to: Buffer.from(_, 'base64')
// would otherwise skip stray characters and silently turn a mistyped key into other bytes.
const BASE64_KEY = /^[A-Za-z0-9+/]{43}=?$/;

/** MASTER_KEY is 32 bytes given as base64 or hex. */
export function parseMasterKey(value: string): Buffer {
  if (HEX_KEY.test(value)) return Buffer.from(value, 'hex');
  if (BASE64_KEY.test(value)) return Buffer.from(value, 'base64');
  throw new Error('MASTER_KEY must be 32 bytes, as base64 (44 characters) or hex (64 characters)');
}

export function sealSecret(masterKey: Buffer, plaintext: string): string {
  const iv = randomBytes(IV_BYTES);
  const cipher = createCipheriv('aes-256-gcm', masterKey, iv);
  const ciphertext = Buffer.concat([cipher.update(plaintext, 'utf8'), cipher.final()]);
  return `${VERSION}:${Buffer.concat([iv, cipher.getAuthTag(), ciphertext]).toString('base64')}`;
}

export function openSecret(masterKey: Buffer, sealed: string): string {
  const [version, payload] = sealed.split(':', 2);
  if (version !== VERSION || !payload) throw new Error('Unknown sealed secret format');
  const bytes = Buffer.from(payload, 'base64');
  const decipher = createDecipheriv('aes-256-gcm', masterKey, bytes.subarray(0, IV_BYTES));
  decipher.setAuthTag(bytes.subarray(IV_BYTES, IV_BYTES + TAG_BYTES));
  return Buffer.concat([decipher.update(bytes.subarray(IV_BYTES + TAG_BYTES)), decipher.final()]).toString('utf8');
}
