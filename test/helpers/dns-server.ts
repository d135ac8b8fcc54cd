import { Resolver } from 'node:dns/promises';
import type { AddressInfo } from 'node:net';
import dns2 from 'dns2';

const { Packet } = dns2;
/** RFC 1035 §4.1.1 response codes (dns2's typings leave out its RCODE table). */
export const RCODE = { SERVFAIL: 2, NXDOMAIN: 3, REFUSED: 5 } as const;

export interface MxEntry {
  exchange: string;
  priority: number;
}

interface Zone {
  txt: string[][];
  mx: MxEntry[];
  /** Answer every query for the name with this response code (SERVFAIL, REFUSED) instead of records. */
  rcode?: number;
}

/**
 * An authoritative DNS server for tests, on 127.0.0.1 with an ephemeral port (UDP and TCP on the same
 * port, so large answers that set the truncation bit are retried over TCP as with a real server). It
 * answers only the records a test sets: unknown names are NXDOMAIN, so nothing ever leaves the machine.
 */
export interface TestDnsServer {
  /** `127.0.0.1:<port>`, the form DNS_SERVERS takes. */
  address: string;
  /** Sets the TXT records of a name; each text is split into 255-octet character-strings. */
  setTxt(name: string, ...texts: string[]): void;
  setMx(name: string, ...hosts: MxEntry[]): void;
  /** Makes every query for the name fail with SERVFAIL (a broken or unreachable authoritative server). */
  failWith(name: string, rcode?: number): void;
  remove(name: string): void;
  /** node:dns asking only this server, in the resolver signature mailauth takes. */
  resolver: (name: string, rrtype: string) => Promise<string[][] | string[]>;
  close(): Promise<void>;
}

const key = (name: string) => name.toLowerCase().replace(/\.$/, '');

function chunks(text: string): string[] {
  const strings: string[] = [];
  for (let start = 0; start < text.length; start += 255) strings.push(text.slice(start, start + 255));
  return strings.length ? strings : [''];
}

export async function startDnsServer(): Promise<TestDnsServer> {
  const zones = new Map<string, Zone>();
  const zone = (name: string): Zone => {
    const existing = zones.get(key(name));
    if (existing) return existing;
    const created: Zone = { txt: [], mx: [] };
    zones.set(key(name), created);
    return created;
  };

  const handle = (request: dns2.Packet, send: (response: dns2.Packet) => void) => {
    const response = Packet.createResponseFromRequest(request);
    response.header.aa = 1;
    const [question] = request.questions;
    const found = question ? zones.get(key(question.name)) : undefined;
    if (!question || !found) {
      response.header.rcode = RCODE.NXDOMAIN;
    } else if (found.rcode !== undefined) {
      response.header.rcode = found.rcode;
    } else if (question.type === Packet.TYPE.TXT) {
      for (const data of found.txt) response.answers.push({ name: question.name, type: Packet.TYPE.TXT, class: Packet.CLASS.IN, ttl: 60, data } as dns2.Packet.Resource);
    } else if (question.type === Packet.TYPE.MX) {
      for (const mx of found.mx) {
        response.answers.push({ name: question.name, type: Packet.TYPE.MX, class: Packet.CLASS.IN, ttl: 60, ...mx } as dns2.Packet.Resource);
      }
    }
    send(response);
  };

  // UDP takes an ephemeral port and TCP must then get the same number, which another socket may already
  // hold on TCP: on a clash, give both up and try another port.
  let udp: ReturnType<typeof dns2.createUDPServer>;
  let tcp: ReturnType<typeof dns2.createTCPServer>;
  let port = 0;
  for (let attempt = 1; ; attempt += 1) {
    udp = dns2.createUDPServer(handle as dns2.DnsHandler);
    await udp.listen(0, '127.0.0.1');
    port = (udp.address() as AddressInfo).port;
    tcp = dns2.createTCPServer(handle as dns2.DnsHandler);
    const bound = tcp;
    try {
      await new Promise<void>((resolve, reject) => {
        bound.once('error', reject);
        bound.listen(port, '127.0.0.1', () => resolve());
      });
      break;
    } catch (error) {
      await new Promise<void>((resolve) => udp.close(() => resolve()));
      if (attempt >= 20) throw error;
    }
  }
  const address = `127.0.0.1:${port}`;
  const resolver = new Resolver({ timeout: 1_000, tries: 1 });
  resolver.setServers([address]);

  return {
    address,
    setTxt: (name, ...texts) => {
      zone(name).txt = texts.map(chunks);
    },
    setMx: (name, ...hosts) => {
      zone(name).mx = hosts;
    },
    failWith: (name, rcode = RCODE.SERVFAIL) => {
      zone(name).rcode = rcode;
    },
    remove: (name) => {
      zones.delete(key(name));
    },
    resolver: (name, rrtype) => resolver.resolve(name, rrtype) as Promise<string[][] | string[]>,
    close: async () => {
      await Promise.all([new Promise((resolve) => udp.close(() => resolve(undefined))), new Promise((resolve) => tcp.close(() => resolve(undefined)))]);
    },
  };
}
