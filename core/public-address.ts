import ipaddr from 'ipaddr.js';

/**
 * Which addresses the service may connect to on a customer's behalf (attachment URLs, and any other
 * customer-given URL). Only what ipaddr.js calls plain `unicast` is public: that excludes loopback,
 * private (10/8, 172.16/12, 192.168/16), link-local (169.254/16, fe80::/10), carrier-grade NAT
 * (100.64/10), unique-local (fc00::/7), unspecified, multicast, broadcast and the reserved and
 * documentation ranges. IPv4-mapped IPv6 (::ffff:0:0/96) is judged as the IPv4 it carries. The deprecated
 * IPv4-compatible range (::/96, RFC 4291 2.5.5.1) and the ranges that embed IPv4 elsewhere (6to4, NAT64,
 * Teredo) are refused outright: some stacks route ::7f00:1 to 127.0.0.1, and nothing public lives there.
 */

/** Cloud metadata endpoints, named even where a range rule already covers them, so no change of rules lets one through. */
const METADATA_ADDRESSES = new Set([
  '169.254.169.254', // AWS, GCP, Azure, OpenStack, DigitalOcean
  '169.254.170.2', // AWS ECS task metadata
  '100.100.100.200', // Alibaba Cloud
  '192.0.0.192', // Oracle Cloud
  'fd00:ec2::254', // AWS IMDS over IPv6
]);

export type AddressVerdict = { public: true } | { public: false; reason: string };

/**
 * ipaddr.js reads a dotted tail without `ffff` (`::127.0.0.1`) as IPv4-mapped, while the address is
 * IPv4-compatible (::7f00:1); writing the tail in hex first makes it parse as what it is.
 */
function hexTail(address: string): string {
  const dotted = /^(.*:)(\d{1,3})\.(\d{1,3})\.(\d{1,3})\.(\d{1,3})$/.exec(address);
  if (!dotted) return address;
  const [a, b, c, d] = dotted.slice(2).map(Number);
  if ([a, b, c, d].some((octet) => octet > 255)) return address;
  return `${dotted[1]}${((a << 8) | b).toString(16)}:${((c << 8) | d).toString(16)}`;
}

/** ::/96 apart from :: and ::1, which keep their own (unspecified, loopback) reasons below. */
function isIpv4Compatible(parsed: ipaddr.IPv4 | ipaddr.IPv6): boolean {
  if (parsed.kind() !== 'ipv6') return false;
  const parts = (parsed as ipaddr.IPv6).parts;
  return parts.slice(0, 6).every((part) => part === 0) && (parts[6] !== 0 || parts[7] > 1);
}

export function classifyAddress(address: string): AddressVerdict {
  let parsed: ipaddr.IPv4 | ipaddr.IPv6;
  try {
    // process() turns ::ffff:127.0.0.1 into the IPv4 address it stands for.
    parsed = ipaddr.process(hexTail(address));
  } catch {
    return { public: false, reason: 'not an IP address' };
  }
  if (isIpv4Compatible(parsed)) return { public: false, reason: 'an IPv4-compatible address' };
  const normalised = parsed.toNormalizedString();
  const canonical = parsed.kind() === 'ipv6' ? parsed.toString() : normalised;
  if (METADATA_ADDRESSES.has(canonical)) return { public: false, reason: 'a cloud metadata address' };
  const range = parsed.range();
  if (range !== 'unicast') return { public: false, reason: `a ${range} address` };
  return { public: true };
}

/** `localhost` and `*.localhost` always mean loopback (RFC 6761): refused without asking DNS. */
export function isLoopbackName(hostname: string): boolean {
  const name = hostname.toLowerCase().replace(/\.$/, '');
  return name === 'localhost' || name.endsWith('.localhost');
}
