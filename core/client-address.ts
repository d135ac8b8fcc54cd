import ipaddr from 'ipaddr.js';

/** How many leading bits of an IPv6 address name one client: a /64 is what one customer line is given. */
const IPV6_CLIENT_BITS = 64;

const OCTET = '(?:25[0-5]|2[0-4]\\d|1\\d\\d|[1-9]?\\d)';
/** Four decimal octets without leading zeros (as ipaddr.js prints them), bare or after `::ffff:`. */
const CANONICAL_IPV4 = new RegExp(`^(?:::ffff:)?(${OCTET}(?:\\.${OCTET}){3})$`, 'i');

/** The dotted quad of a canonical IPv4 address, bare or `::ffff:`-mapped; null for any other spelling. */
export function canonicalIPv4(address: string): string | null {
  return CANONICAL_IPV4.exec(address)?.[1] ?? null;
}

/**
 * The key under which a client's requests are counted by the per-address limits of the public routes.
 * An IPv4 address (also written IPv4-mapped, `::ffff:1.2.3.4`) counts alone; an IPv6 address counts with
 * the rest of its /64, because whoever has one address of a /64 usually has all 2^64 of them, and a
 * limit per address would then limit nothing. Whatever does not parse (no address known) shares one key.
 */
export function clientKeyOf(address: string | undefined): string {
  // Nearly every client is a plain dotted IPv4 address (or Node's IPv4-mapped spelling of one): its key is
  // itself, read without parsing it twice, which cost the tracking redirect a tenth of its time (docs/
  // benchmarks.md, tracking). Other spellings (octal, short forms, hex-mapped) take the parser's way.
  const dotted = address && canonicalIPv4(address);
  if (dotted) return dotted;
  if (!address || !ipaddr.isValid(address)) return 'unknown';
  const parsed = ipaddr.process(address);
  if (parsed.kind() === 'ipv4') return parsed.toString();
  const parts = (parsed as ipaddr.IPv6).toByteArray().slice(0, IPV6_CLIENT_BITS / 8);
  const prefix = Array.from({ length: parts.length / 2 }, (_, i) => ((parts[2 * i] << 8) | parts[2 * i + 1]).toString(16));
  return `${prefix.join(':')}::/${IPV6_CLIENT_BITS}`;
}
