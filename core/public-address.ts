import ipaddr from 'ipaddr.js';

/**
 * Which addresses the service may connect to on a customer's behalf (attachment URLs, and any other
 * customer-given URL). Only what ipaddr.js calls plain `unicast` is public: that excludes loopback,
 * private (10/8, 172.16/12, 192.168/16), link-local (169.254/16, fe80::/10), carrier-grade NAT
 * (100.64/10), unique-local (fc00::/7), unspecified, multicast, broadcast and the reserved and
 * documentation ranges. IPv4-mapped and IPv4-compatible IPv6 forms are judged as the IPv4 they carry;
 * the IPv6 ranges that embed IPv4 elsewhere (6to4, NAT64, Teredo) are refused outright.
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

export function classifyAddress(address: string): AddressVerdict {
  let parsed: ipaddr.IPv4 | ipaddr.IPv6;
  try {
    // process() turns ::ffff:127.0.0.1 (and ::127.0.0.1) into the IPv4 address they stand for.
    parsed = ipaddr.process(address);
  } catch {
    return { public: false, reason: 'not an IP address' };
  }
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
