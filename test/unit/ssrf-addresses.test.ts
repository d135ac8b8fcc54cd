import { classifyAddress, isLoopbackName } from '../../core/public-address';

describe('which addresses count as public', () => {
  it.each(['8.8.8.8', '93.184.216.34', '1.1.1.1', '2606:4700:4700::1111', '2001:4860:4860::8888', '::ffff:8.8.8.8'])('%s is public', (address) => {
    expect(classifyAddress(address)).toEqual({ public: true });
  });

  it.each([
    ['127.0.0.1', 'a loopback address'],
    ['127.255.255.254', 'a loopback address'],
    ['::1', 'a loopback address'],
    ['::ffff:127.0.0.1', 'a loopback address'],
    ['::ffff:7f00:1', 'a loopback address'],
    ['10.0.0.1', 'a private address'],
    ['172.16.0.1', 'a private address'],
    ['172.31.255.255', 'a private address'],
    ['192.168.1.1', 'a private address'],
    ['::ffff:192.168.1.1', 'a private address'],
    ['169.254.169.254', 'a cloud metadata address'],
    ['::ffff:169.254.169.254', 'a cloud metadata address'],
    ['169.254.1.1', 'a linkLocal address'],
    ['fe80::1', 'a linkLocal address'],
    ['100.64.0.1', 'a carrierGradeNat address'],
    ['100.127.255.255', 'a carrierGradeNat address'],
    ['100.100.100.200', 'a cloud metadata address'],
    ['fc00::1', 'a uniqueLocal address'],
    ['fd00:ec2::254', 'a cloud metadata address'],
    ['0.0.0.0', 'a unspecified address'],
    ['::', 'a unspecified address'],
    ['::7f00:1', 'an IPv4-compatible address'],
    ['::127.0.0.1', 'an IPv4-compatible address'],
    ['0:0:0:0:0:0:7f00:1', 'an IPv4-compatible address'],
    ['::a9fe:a9fe', 'an IPv4-compatible address'],
    ['::10.0.0.1', 'an IPv4-compatible address'],
    ['::8.8.8.8', 'an IPv4-compatible address'],
    ['::2', 'an IPv4-compatible address'],
    ['224.0.0.1', 'a multicast address'],
    ['ff02::1', 'a multicast address'],
    ['255.255.255.255', 'a broadcast address'],
    ['192.0.2.1', 'a reserved address'],
    ['64:ff9b::a9fe:a9fe', 'a rfc6052 address'],
    ['2002:a9fe:a9fe::', 'a 6to4 address'],
    ['2001::1', 'a teredo address'],
  ])('%s is refused as %s', (address, reason) => {
    expect(classifyAddress(address)).toEqual({ public: false, reason });
  });

  it('a host name is not an address', () => {
    expect(classifyAddress('example.com')).toEqual({ public: false, reason: 'not an IP address' });
  });

  it('localhost and its subdomains are loopback by name (RFC 6761)', () => {
    expect(isLoopbackName('localhost')).toBe(true);
    expect(isLoopbackName('LOCALHOST.')).toBe(true);
    expect(isLoopbackName('api.localhost')).toBe(true);
    expect(isLoopbackName('localhost.example.com')).toBe(false);
  });
});
