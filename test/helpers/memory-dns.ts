import type { DnsLookup, MxHost } from '../../core/dns-answers';

/**
 * A DnsLookup answering from maps, for unit tests of the checks. A name listed in `failing` answers as a
 * timed-out lookup would; every other unknown name is absent. `queries` records what was asked, in order.
 */
export function memoryDns(records: { txt?: Record<string, string[]>; mx?: Record<string, MxHost[]>; failing?: string[] }) {
  const queries: string[] = [];
  const failing = new Set(records.failing ?? []);
  const lookup: DnsLookup = {
    async txt(name) {
      queries.push(`TXT ${name}`);
      if (failing.has(name)) return { kind: 'error', reason: 'no answer from the DNS servers in time' };
      const found = records.txt?.[name];
      return found ? { kind: 'found', records: found } : { kind: 'none' };
    },
    async mx(name) {
      queries.push(`MX ${name}`);
      if (failing.has(name)) return { kind: 'error', reason: 'no answer from the DNS servers in time' };
      const found = records.mx?.[name];
      return found ? { kind: 'found', hosts: found } : { kind: 'none' };
    },
  };
  return { lookup, queries };
}
