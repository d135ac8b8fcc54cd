import { clientKeyOf } from '../../core/client-address';

describe('the client key of the per-address limits', () => {
  it('an IPv4 address counts alone, also written IPv4-mapped', () => {
    expect(clientKeyOf('203.0.113.7')).toBe('203.0.113.7');
    expect(clientKeyOf('::ffff:203.0.113.7')).toBe('203.0.113.7');
    expect(clientKeyOf('203.0.113.8')).not.toBe(clientKeyOf('203.0.113.7'));
  });

  it('IPv6 addresses of one /64 share a key, however written; another /64 does not', () => {
    const key = clientKeyOf('2001:db8:1:2::1');
    expect(clientKeyOf('2001:0db8:0001:0002:ffff:ffff:ffff:ffff')).toBe(key);
    expect(clientKeyOf('2001:db8:1:2:abcd::9')).toBe(key);
    expect(clientKeyOf('2001:db8:1:3::1')).not.toBe(key);
    expect(key).toBe('2001:db8:1:2::/64');
  });

  it('an IPv4 address in any spelling the parser reads has the key of its canonical form', () => {
    for (const [written, key] of [
      ['::FFFF:203.0.113.7', '203.0.113.7'],
      ['0.0.0.0', '0.0.0.0'],
      ['255.255.255.255', '255.255.255.255'],
      ['010.0.0.1', '8.0.0.1'],
      ['127.1', '127.0.0.1'],
      ['::ffff:7f00:1', '127.0.0.1'],
    ]) expect(clientKeyOf(written)).toBe(key);
    expect(clientKeyOf('256.0.0.1')).toBe('unknown');
    expect(clientKeyOf('1.2.3.4.5')).toBe('unknown');
  });

  it('no address, or something that is not one, shares a single key', () => {
    expect(clientKeyOf(undefined)).toBe('unknown');
    expect(clientKeyOf('not an address')).toBe('unknown');
  });
});
