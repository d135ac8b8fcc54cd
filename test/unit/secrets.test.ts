import { randomBytes } from 'node:crypto';
import { openSecret, parseMasterKey, sealSecret } from '../../core/secrets';

describe('secrets at rest', () => {
  const key = randomBytes(32);

  it('a sealed secret opens to the same text, and sealing twice never gives the same output', () => {
    const first = sealSecret(key, '-----BEGIN PRIVATE KEY-----\nabc');
    expect(first).toMatch(/^v1:/);
    expect(first).not.toBe(sealSecret(key, '-----BEGIN PRIVATE KEY-----\nabc'));
    expect(openSecret(key, first)).toBe('-----BEGIN PRIVATE KEY-----\nabc');
  });

  it('a tampered secret or the wrong key is refused', () => {
    const sealed = sealSecret(key, 'secret');
    const bytes = Buffer.from(sealed.slice(3), 'base64');
    bytes[bytes.length - 1] ^= 1;
    expect(() => openSecret(key, `v1:${bytes.toString('base64')}`)).toThrow();
    expect(() => openSecret(randomBytes(32), sealed)).toThrow();
  });

  it('the master key is 32 bytes of base64 or hex', () => {
    expect(parseMasterKey(randomBytes(32).toString('base64'))).toHaveLength(32);
    expect(parseMasterKey(randomBytes(32).toString('hex'))).toHaveLength(32);
    expect(() => parseMasterKey('too-short')).toThrow(/32 bytes/);
  });
});
