import { createCipheriv, randomBytes, randomUUID } from 'node:crypto';
import {
  currentSealPrefix,
  isSealedUnderCurrentKey,
  keyringOf,
  macKeys,
  masterKey,
  openSecret,
  parseMasterKey,
  resealSecret,
  type SealContext,
  sealContextOf,
  sealSecret,
} from '../../core/secrets';

/** The first format (before key ids): AES-256-GCM under the raw master key, no associated data. */
function sealLegacy(key: Buffer, plaintext: string): string {
  const iv = randomBytes(12);
  const cipher = createCipheriv('aes-256-gcm', key, iv);
  const ciphertext = Buffer.concat([cipher.update(plaintext, 'utf8'), cipher.final()]);
  return `v1:${Buffer.concat([iv, cipher.getAuthTag(), ciphertext]).toString('base64')}`;
}

describe('secrets at rest', () => {
  const keyA = randomBytes(32);
  const keyB = randomBytes(32);
  const ringA = keyringOf(keyA);
  const place: SealContext = { workspaceId: randomUUID(), column: 'twilio_integrations.auth_token' };

  it('a sealed secret opens to the same text, and sealing twice never gives the same output', () => {
    const first = sealSecret(ringA, place, '-----BEGIN PRIVATE KEY-----\nabc');
    expect(first).not.toBe(sealSecret(ringA, place, '-----BEGIN PRIVATE KEY-----\nabc'));
    expect(openSecret(ringA, place, first)).toBe('-----BEGIN PRIVATE KEY-----\nabc');
  });

  it('a sealed value names the key that sealed it by an id that is not the key', () => {
    const sealed = sealSecret(ringA, place, 'secret');
    const id = masterKey(keyA).id;
    expect(sealed.startsWith(`v2:${id}:`)).toBe(true);
    expect(id).toMatch(/^[A-Za-z0-9_-]{8}$/);
    expect(keyA.toString('base64url')).not.toContain(id);
    expect(masterKey(keyB).id).not.toBe(id);
  });

  it('a tampered secret or a ring without its key is refused', () => {
    const sealed = sealSecret(ringA, place, 'secret');
    const [version, id, payload] = sealed.split(':');
    const bytes = Buffer.from(payload, 'base64');
    bytes[bytes.length - 1] ^= 1;
    expect(() => openSecret(ringA, place, `${version}:${id}:${bytes.toString('base64')}`)).toThrow();
    expect(() => openSecret(keyringOf(keyB), place, sealed)).toThrow(/not in MASTER_KEY or MASTER_KEY_PREVIOUS/);
    // Relabelled with another key's id: that key does not open it either.
    expect(() => openSecret(keyringOf(keyB), place, `v2:${masterKey(keyB).id}:${payload}`)).toThrow();
  });

  it('a sealed value moved to another workspace or another column does not open', () => {
    const sealed = sealSecret(ringA, place, 'secret');
    expect(() => openSecret(ringA, { ...place, workspaceId: randomUUID() }, sealed)).toThrow();
    expect(() => openSecret(ringA, { ...place, column: 'analytics_connections.token' }, sealed)).toThrow();
    expect(openSecret(ringA, { ...place, workspaceId: place.workspaceId.toUpperCase() }, sealed)).toBe('secret');
  });

  it('where a workspace has several rows, a sealed value moved to another of its rows does not open', () => {
    const webhook = { workspaceId: place.workspaceId, column: 'webhooks.secret', row: randomUUID() } as const;
    const sealed = sealSecret(ringA, webhook, 'whsec_abc');
    expect(openSecret(ringA, webhook, sealed)).toBe('whsec_abc');
    expect(() => openSecret(ringA, { ...webhook, row: randomUUID() }, sealed)).toThrow();
    const dkim = { workspaceId: place.workspaceId, column: 'domains.dkim_private_key', row: 'mail.example.com' } as const;
    expect(() => openSecret(ringA, { ...dkim, row: 'other.example.com' }, sealSecret(ringA, dkim, 'pem'))).toThrow();
  });

  it('a context built at run time must name a row exactly where the column has several per workspace', () => {
    expect(sealContextOf(place.workspaceId, 'webhooks.secret', 'id')).toEqual({ workspaceId: place.workspaceId, column: 'webhooks.secret', row: 'id' });
    expect(() => sealContextOf(place.workspaceId, 'webhooks.secret', null)).toThrow(/needs row/);
    expect(() => sealContextOf(place.workspaceId, 'twilio_integrations.auth_token', 'x')).toThrow(/takes no row/);
  });

  it('after a rotation the new key seals, the old one still opens, and a re-seal moves the value to the new key', () => {
    const old = sealSecret(ringA, place, 'secret');
    const rotated = keyringOf(keyB, keyA);
    expect(openSecret(rotated, place, old)).toBe('secret');
    expect(isSealedUnderCurrentKey(rotated, old)).toBe(false);
    const resealed = resealSecret(rotated, place, old);
    expect(resealed.startsWith(currentSealPrefix(rotated))).toBe(true);
    expect(isSealedUnderCurrentKey(rotated, resealed)).toBe(true);
    expect(openSecret(keyringOf(keyB), place, resealed)).toBe('secret');
  });

  it('a value of the first format (no key id, no binding) still opens under any key of the ring, and re-seals bound', () => {
    const legacy = sealLegacy(keyA, 'secret');
    expect(openSecret(ringA, place, legacy)).toBe('secret');
    expect(openSecret(keyringOf(keyB, keyA), place, legacy)).toBe('secret');
    expect(() => openSecret(keyringOf(keyB), place, legacy)).toThrow();
    const resealed = resealSecret(keyringOf(keyB, keyA), place, legacy);
    expect(() => openSecret(keyringOf(keyB), { ...place, workspaceId: randomUUID() }, resealed)).toThrow();
    expect(openSecret(keyringOf(keyB), place, resealed)).toBe('secret');
  });

  it('an unknown format is refused', () => {
    for (const bad of ['', 'v3:abc', 'v2:only-two', 'plain text']) expect(() => openSecret(ringA, place, bad)).toThrow(/Unknown sealed secret format/);
  });

  it('MACs are made with the current key and checked with every previous key that is not published', () => {
    const published = masterKey(randomBytes(32), true);
    const ring = keyringOf(keyB, keyA, published);
    expect(macKeys(ring)).toEqual([keyB, keyA]);
    // A published previous key still opens what it sealed, so it can be re-sealed.
    expect(openSecret(ring, place, sealSecret(keyringOf(published), place, 'secret'))).toBe('secret');
  });

  it('the master key is 32 bytes of base64 or hex', () => {
    expect(parseMasterKey(randomBytes(32).toString('base64'))).toHaveLength(32);
    expect(parseMasterKey(randomBytes(32).toString('hex'))).toHaveLength(32);
    expect(() => parseMasterKey('too-short')).toThrow(/32 bytes/);
  });
});
