import ipaddr from 'ipaddr.js';
import { canonicalIPv4 } from '../client-address';

/**
 * Who fetches pixels and follows links without a person behind them, as data the classification reads.
 * Networks are matched by address; user agents by pattern. isbot (a maintained list of crawler agents)
 * covers the generic ones; these are the mail-specific fetchers it does not name.
 */

/** Apple's own network (AS714): Mail Privacy Protection fetches every image from it at delivery. */
const APPLE_NETWORKS = ['17.0.0.0/8', '2620:149::/32', '2a01:b740::/32'];

/**
 * Published ranges of the largest mail security gateways, which open links and images to scan them:
 * Microsoft Exchange Online Protection (Safe Links), Mimecast, Proofpoint, Barracuda.
 */
const SCANNER_NETWORKS = [
  '40.92.0.0/15', '40.107.0.0/16', '52.100.0.0/14', '104.47.0.0/17',
  '205.139.110.0/24', '207.211.30.0/24', '207.211.31.0/25', '170.10.128.0/24',
  '148.163.128.0/19', '67.231.144.0/20',
  '64.235.144.0/20', '209.222.80.0/21',
];

/** Link scanners of security products that announce themselves (isbot does not know these names). */
export const SCANNER_AGENT =
  /barracuda|mimecast|proofpoint|safelinks|trend ?micro|symantec|messagelabs|forcepoint|sophos|fireeye|ironport|zscaler|cloudmark|bitdefender|urlscan|check ?point|avanan|abnormal ?security|vade ?secure|fortiguard|microsoft office\/|ms-office|outlook-(ios|android)-linkpreview/i;

/** Gmail fetches images through this proxy when the person opens the message: a human open. */
export const GOOGLE_IMAGE_PROXY_AGENT = /GoogleImageProxy/;

/** The agent Mail Privacy Protection sends: nothing but the product token. */
export const APPLE_PROXY_AGENT = 'Mozilla/5.0';

type Network = [ipaddr.IPv4 | ipaddr.IPv6, number];
const parse = (cidrs: string[]): Network[] => cidrs.map((cidr) => ipaddr.parseCIDR(cidr));
const apple = parse(APPLE_NETWORKS);
const scanners = parse(SCANNER_NETWORKS);

export type Address = ipaddr.IPv4 | ipaddr.IPv6 | null;

/** Parsed once per hit; an IPv4 client on a dual-stack socket arrives as ::ffff:a.b.c.d and is read as IPv4. */
export function parseAddress(ip: string): Address {
  // The common case built from its octets: ipaddr.process tries it as IPv6 first (a quarter of a hit's classification).
  const dotted = canonicalIPv4(ip);
  if (dotted) return new ipaddr.IPv4(dotted.split('.').map(Number));
  try {
    return ipaddr.process(ip);
  } catch {
    return null;
  }
}

function inAny(address: Address, networks: Network[]): boolean {
  return address !== null && networks.some((network) => address.kind() === network[0].kind() && address.match(network));
}

export const fromAppleNetwork = (address: Address) => inAny(address, apple);
export const fromScannerNetwork = (address: Address) => inAny(address, scanners);
