import { Resolver } from 'node:dns/promises';
import type { DnsLookup, MxAnswer, TxtAnswer } from '../core/dns-answers';

/** The resolver's answers that mean "no such record": definitive, unlike a timeout or a server failure. */
const ABSENT = new Set(['ENODATA', 'ENOTFOUND']);

export interface DnsLookupOptions {
  /** `host` or `host:port` entries (DNS_SERVERS); empty means the system's resolvers. */
  servers: readonly string[];
  timeoutMs?: number;
  tries?: number;
}

/**
 * The DnsLookup port over node:dns, asking only the configured servers, so tests can answer from their own
 * DNS server and production can use a trusted recursive resolver.
 */
export function createDnsLookup(options: DnsLookupOptions): DnsLookup {
  const resolver = new Resolver({ timeout: options.timeoutMs ?? 3_000, tries: options.tries ?? 2 });
  if (options.servers.length) resolver.setServers([...options.servers]);

  return {
    async txt(name: string): Promise<TxtAnswer> {
      try {
        const records = await resolver.resolveTxt(name);
        return { kind: 'found', records: records.map((strings) => strings.join('')) };
      } catch (error) {
        return failure(error);
      }
    },
    async mx(name: string): Promise<MxAnswer> {
      try {
        const hosts = await resolver.resolveMx(name);
        return { kind: 'found', hosts };
      } catch (error) {
        return failure(error);
      }
    },
  };
}

/**
 * The same configured servers in the resolver form mailauth takes (`resolve(name, rrtype)`): the inbound
 * listener's SPF, DKIM and DMARC lookups ask what domain verification asks.
 */
export function createDnsResolve(options: DnsLookupOptions): (name: string, rrtype: string) => Promise<string[][] | string[]> {
  const resolver = new Resolver({ timeout: options.timeoutMs ?? 3_000, tries: options.tries ?? 2 });
  if (options.servers.length) resolver.setServers([...options.servers]);
  return (name, rrtype) => resolver.resolve(name, rrtype) as Promise<string[][] | string[]>;
}

function failure(error: unknown): { kind: 'none' } | { kind: 'error'; reason: string } {
  const code = (error as { code?: unknown }).code;
  if (typeof code === 'string' && ABSENT.has(code)) return { kind: 'none' };
  return { kind: 'error', reason: REASONS[String(code)] ?? `DNS error ${String(code ?? error)}` };
}

const REASONS: Record<string, string> = {
  ETIMEOUT: 'no answer from the DNS servers in time',
  ESERVFAIL: 'the DNS server reported a failure',
  EREFUSED: 'the DNS server refused the query',
  ECONNREFUSED: 'the DNS server could not be reached',
};
