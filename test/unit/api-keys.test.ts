import { bearerToken, displayPrefix, generateApiKey, hashApiKey, looksLikeApiKey } from '../../core/api-keys';

describe('API keys', () => {
  it('are sk_ and 40 base62 characters, stored as a SHA-256 hash and a short prefix', () => {
    const key = generateApiKey();
    expect(key.key).toMatch(/^sk_[0-9A-Za-z]{40}$/);
    expect(key.hash).toBe(hashApiKey(key.key));
    expect(key.hash).toMatch(/^[0-9a-f]{64}$/);
    expect(key.displayPrefix).toBe(key.key.slice(0, 11));
    expect(key.key.startsWith(displayPrefix(key.key))).toBe(true);
  });

  it('never repeat across many draws', () => {
    const keys = new Set(Array.from({ length: 2_000 }, () => generateApiKey().key));
    expect(keys.size).toBe(2_000);
  });

  it('use every base62 character about evenly (no modulo bias)', () => {
    const counts = new Map<string, number>();
    for (let i = 0; i < 2_000; i += 1) {
      for (const char of generateApiKey().key.slice(3)) counts.set(char, (counts.get(char) ?? 0) + 1);
    }
    expect(counts.size).toBe(62);
    const expected = (2_000 * 40) / 62;
    for (const count of counts.values()) expect(Math.abs(count - expected)).toBeLessThan(expected * 0.25);
  });

  it.each([
    ['Bearer sk_abc', 'sk_abc'],
    ['bearer   sk_abc  ', 'sk_abc'],
    ['Basic sk_abc', null],
    ['Bearer', null],
    ['Bearer sk_a sk_b', null],
    [undefined, null],
  ])('reads the bearer token from %p', (header, token) => {
    expect(bearerToken(header)).toBe(token);
  });

  it.each([
    ['sk_' + 'a'.repeat(32), true],
    ['sk_' + 'a'.repeat(31), false],
    ['pk_' + 'a'.repeat(40), false],
    ['sk_' + 'a'.repeat(39) + '-', false],
  ])('recognises the shape of %p: %p', (token, ok) => {
    expect(looksLikeApiKey(token)).toBe(ok);
  });
});
