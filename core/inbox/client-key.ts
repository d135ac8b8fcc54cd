import ipaddr from 'ipaddr.js';

/**
 * The key the listener counts a client's connections and messages under: its IPv4 address, or the /64 of
 * an IPv6 one, since a single host or subscriber commonly holds a whole /64 and could otherwise take a new
 * address for every connection. IPv4-mapped IPv6 addresses count as their IPv4 address.
 */
export function clientKey(remoteAddress: string): string {
  if (!ipaddr.isValid(remoteAddress)) return remoteAddress;
  const address = ipaddr.process(remoteAddress);
  if (address.kind() === 'ipv4') return address.toString();
  const prefix = (address as ipaddr.IPv6).parts.slice(0, 4).map((part) => part.toString(16)).join(':');
  return `${prefix}::/64`;
}
