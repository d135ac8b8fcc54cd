/**
 * What the domain checks need from DNS, as a port: core judges the answers, an activity does the lookups
 * (node:dns against the configured servers), and unit tests answer from a map.
 *
 * `none` is a definitive answer (NXDOMAIN or no record of that type): the record is missing. `error` is no
 * answer at all (timeout, SERVFAIL, refused): it says nothing about the records, so it never fails a domain.
 */
export type TxtAnswer = { kind: 'found'; records: string[] } | { kind: 'none' } | { kind: 'error'; reason: string };

export interface MxHost {
  exchange: string;
  priority: number;
}

export type MxAnswer = { kind: 'found'; hosts: MxHost[] } | { kind: 'none' } | { kind: 'error'; reason: string };

export interface DnsLookup {
  /** TXT records at `name`, each one's character-strings joined into one text (RFC 7208 §3.3). */
  txt(name: string): Promise<TxtAnswer>;
  mx(name: string): Promise<MxAnswer>;
}

/** Host names compare case-insensitively and with or without the root's trailing dot. */
export function sameHost(a: string, b: string): boolean {
  const canonical = (host: string) => host.toLowerCase().replace(/\.$/, '');
  return canonical(a) === canonical(b);
}
