import { createCipheriv, createDecipheriv, hkdfSync, randomBytes } from 'node:crypto';

/**
 * Secrets at rest (DKIM private keys, provider credentials, webhook secrets) are sealed with AES-256-GCM
 * under a key derived from the deployment's MASTER_KEY (docs/security.md, "Sealed secrets and MASTER_KEY").
 *
 * `v2:<key id>:<base64 of iv | tag | ciphertext>`. The key id names the master key that sealed the value,
 * so a keyring (MASTER_KEY and MASTER_KEY_PREVIOUS) knows which key opens it and what is left to re-seal.
 * The associated data binds the value to its workspace, its column and, where a workspace has several
 * rows, its row: a sealed value copied to another row or into another column fails to open. Values of the first format (`v1:`, raw master
 * key, no binding) still open, under any key of the ring, until `secrets:reseal` rewrites them.
 */
const VERSION = 'v2';
const LEGACY_VERSION = 'v1';
const IV_BYTES = 12;
const TAG_BYTES = 16;

const HEX_KEY = /^[0-9a-f]{64}$/i;
// Exactly the 43 characters (and optional padding) that 32 bytes encode to: Buffer.from(_, 'base64')
// would otherwise skip stray characters and silently turn a mistyped key into other bytes.
const BASE64_KEY = /^[A-Za-z0-9+/]{43}=?$/;

/** Where a sealed value lives: it opens only there. */
export type SealContext =
  /** A workspace has several: the row is the domain's name (what the signer looks a key up by). */
  | { workspaceId: string; column: 'domains.dkim_private_key'; row: string }
  /** The row is the webhook's id. Its current and previous secrets share this: rotation moves one into the other. */
  | { workspaceId: string; column: 'webhooks.secret'; row: string }
  /** One row per workspace: the workspace is the row. */
  | {
      workspaceId: string;
      column: 'telegram_integrations.bot_token' | 'telegram_integrations.webhook_secret' | 'twilio_integrations.auth_token' | 'analytics_connections.token';
    };

/** Every column that holds a sealed value; the name is part of the value's associated data. */
export type SealedColumn = SealContext['column'];

const ROW_BOUND: ReadonlySet<SealedColumn> = new Set(['domains.dkim_private_key', 'webhooks.secret']);

/** A context from a column known only at run time (the re-seal walks every column): checks what the types check elsewhere. */
export function sealContextOf(workspaceId: string, column: SealedColumn, row: string | null): SealContext {
  if (ROW_BOUND.has(column) !== (row !== null)) throw new Error(`${column} ${row === null ? 'needs' : 'takes no'} row`);
  return (row === null ? { workspaceId, column } : { workspaceId, column, row }) as SealContext;
}

export interface MasterKey {
  /** 8 characters derived one-way from the key: names it in sealed values and logs, reveals nothing of it. */
  id: string;
  key: Buffer;
  /** The AES-256-GCM key of sealed secrets, derived once (HKDF, a label of its own). */
  sealingKey: Buffer;
  /**
   * A key whose text is public (committed to this repository). It may still open old secrets while they are
   * re-sealed, but verifies no MAC: anyone could have made a token under it.
   */
  published: boolean;
}

/** The current key seals and signs; the previous ones only open and verify, so a rotation breaks nothing. */
export interface Keyring {
  current: MasterKey;
  previous: readonly MasterKey[];
}

/** MASTER_KEY is 32 bytes given as base64 or hex. */
export function parseMasterKey(value: string): Buffer {
  if (HEX_KEY.test(value)) return Buffer.from(value, 'hex');
  if (BASE64_KEY.test(value)) return Buffer.from(value, 'base64');
  throw new Error('MASTER_KEY must be 32 bytes, as base64 (44 characters) or hex (64 characters)');
}

const derive = (key: Buffer, label: string, bytes: number): Buffer => Buffer.from(hkdfSync('sha256', key, Buffer.alloc(0), label, bytes));

export function masterKey(key: Buffer, published = false): MasterKey {
  return { id: derive(key, 'messaging master key id v1', 6).toString('base64url'), key, sealingKey: derive(key, 'messaging sealed secrets v2', 32), published };
}

/** A keyring from raw keys, the current one first (tests, and loadKeyring in core/config.ts). */
export function keyringOf(current: Buffer | MasterKey, ...previous: (Buffer | MasterKey)[]): Keyring {
  const asKey = (key: Buffer | MasterKey) => (Buffer.isBuffer(key) ? masterKey(key) : key);
  const ring = { current: asKey(current), previous: previous.map(asKey) };
  // The current key twice (a MASTER_KEY also left in MASTER_KEY_PREVIOUS) would only try it twice.
  return { ...ring, previous: ring.previous.filter((key) => !key.key.equals(ring.current.key)) };
}

/**
 * The keys a MAC (unsubscribe links, Telegram link tokens, campaign confirmations, tracking) is made and
 * checked with: the current one first (it signs), then every previous key that is not published.
 */
export function macKeys(ring: Keyring): Buffer[] {
  return [ring.current.key, ...ring.previous.filter((key) => !key.published).map((key) => key.key)];
}

function associatedData(keyId: string, context: SealContext): Buffer {
  const row = 'row' in context ? context.row.toLowerCase() : '';
  return Buffer.from(['messaging sealed secret', VERSION, keyId, context.workspaceId.toLowerCase(), context.column, row].join('\n'), 'utf8');
}

export function sealSecret(ring: Keyring, context: SealContext, plaintext: string): string {
  const key = ring.current;
  const iv = randomBytes(IV_BYTES);
  const cipher = createCipheriv('aes-256-gcm', key.sealingKey, iv);
  cipher.setAAD(associatedData(key.id, context));
  const ciphertext = Buffer.concat([cipher.update(plaintext, 'utf8'), cipher.final()]);
  return `${VERSION}:${key.id}:${Buffer.concat([iv, cipher.getAuthTag(), ciphertext]).toString('base64')}`;
}

function decrypt(key: Buffer, payload: string, aad: Buffer | null): string {
  const bytes = Buffer.from(payload, 'base64');
  const decipher = createDecipheriv('aes-256-gcm', key, bytes.subarray(0, IV_BYTES));
  if (aad) decipher.setAAD(aad);
  decipher.setAuthTag(bytes.subarray(IV_BYTES, IV_BYTES + TAG_BYTES));
  return Buffer.concat([decipher.update(bytes.subarray(IV_BYTES + TAG_BYTES)), decipher.final()]).toString('utf8');
}

/** The sealed value's text; throws when it is not genuine, not sealed for this place, or under a key not in the ring. */
export function openSecret(ring: Keyring, context: SealContext, sealed: string): string {
  const keys = [ring.current, ...ring.previous];
  const [version, ...rest] = sealed.split(':');
  if (version === LEGACY_VERSION && rest.length === 1 && rest[0]) return openLegacy(keys, rest[0]);
  if (version !== VERSION || rest.length !== 2 || !rest[1]) throw new Error('Unknown sealed secret format');
  const [keyId, payload] = rest;
  // Key ids are 48 bits of a hash: two keys of one ring could share one, so each that matches is tried.
  const candidates = keys.filter((key) => key.id === keyId);
  if (candidates.length === 0) throw new Error(`Sealed under master key ${keyId}, which is not in MASTER_KEY or MASTER_KEY_PREVIOUS`);
  return firstThatOpens(candidates.map((key) => () => decrypt(key.sealingKey, payload, associatedData(keyId, context))));
}

function openLegacy(keys: readonly MasterKey[], payload: string): string {
  return firstThatOpens(keys.map((key) => () => decrypt(key.key, payload, null)));
}

function firstThatOpens(attempts: (() => string)[]): string {
  let failure: unknown = new Error('no key to open the sealed secret');
  for (const attempt of attempts) {
    try {
      return attempt();
    } catch (error) {
      failure = error;
    }
  }
  throw failure instanceof Error ? failure : new Error('the sealed secret does not open');
}

/** Whether a sealed value is already in the current format under the current key (`secrets:reseal` skips it). */
export function isSealedUnderCurrentKey(ring: Keyring, sealed: string): boolean {
  return sealed.startsWith(currentSealPrefix(ring));
}

/** What every value sealed under the current key starts with: the re-seal command's SQL filter. */
export function currentSealPrefix(ring: Keyring): string {
  return `${VERSION}:${ring.current.id}:`;
}

/** A value re-sealed under the current key, for the same place; throws if it does not open. */
export function resealSecret(ring: Keyring, context: SealContext, sealed: string): string {
  return sealSecret(ring, context, openSecret(ring, context, sealed));
}
