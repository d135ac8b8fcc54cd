import { type DnsLookup, sameHost } from './dns-answers';
import { bounceDomainOf } from './bounces/return-path';
import { DMARC_VALUE, dkimRecordName, dmarcRecordName, MX_PRIORITY, type RecordKind, type RecordSettings } from './dns-records';
import { organisationalDomain } from './domain-names';
import { checkSpf } from './spf';

/**
 * Verification of a sending domain (decisions): it passes only when SPF, DKIM and DMARC all check. Each
 * record gets its own status and a detail written for the customer: what is wrong and what to publish.
 */
export type RecordStatus = 'verified' | 'failed' | 'unknown';

export interface RecordCheck {
  record: RecordKind;
  status: RecordStatus;
  detail?: string;
}

export type CheckOutcome = 'verified' | 'failed' | 'inconclusive';

export interface DomainCheck {
  outcome: CheckOutcome;
  records: RecordCheck[];
  /** Every failed or unchecked record's detail, in record order; absent when all passed. */
  detail?: string;
}

export interface CheckedDomain {
  name: string;
  dkimSelector: string;
  dkimPublicKey: string;
  inboundEnabled: boolean;
}

export async function checkDomainRecords(lookup: DnsLookup, domain: CheckedDomain, settings: RecordSettings): Promise<DomainCheck> {
  const [spf, dkim, dmarc, mx, returnPath] = await Promise.all([
    checkSpf(lookup, domain.name, settings.spfInclude).then((verdict): RecordCheck => ({ record: 'spf', ...withoutLookups(verdict) })),
    checkDkim(lookup, domain),
    checkDmarc(lookup, domain.name),
    domain.inboundEnabled ? checkMx(lookup, domain.name, settings.inboundMxHost) : null,
    domain.inboundEnabled ? [] : checkReturnPath(lookup, domain.name, settings),
  ]);
  const required = [spf, dkim, dmarc];
  const records = [...required, ...(mx ? [mx] : []), ...returnPath];
  const outcome: CheckOutcome = required.some((check) => check.status === 'failed')
    ? 'failed'
    : required.some((check) => check.status === 'unknown')
      ? 'inconclusive'
      : 'verified';
  // The return path's records inform their own entries only: a domain's detail is about what verifies it.
  const details = (mx ? [...required, mx] : required).flatMap((check) => (check.detail ? [check.detail] : []));
  return details.length ? { outcome, records, detail: details.join(' ') } : { outcome, records };
}

function withoutLookups(verdict: { status: RecordStatus; detail?: string }): Omit<RecordCheck, 'record'> {
  return verdict.detail ? { status: verdict.status, detail: verdict.detail } : { status: verdict.status };
}

/** `tag=value` pairs of a DKIM or DMARC record (RFC 6376 §3.2); tag names are case-sensitive there, values trimmed. */
export function parseTags(text: string): Map<string, string> {
  const tags = new Map<string, string>();
  for (const part of text.split(';')) {
    const at = part.indexOf('=');
    if (at <= 0) continue;
    const name = part.slice(0, at).trim();
    if (!tags.has(name)) tags.set(name, part.slice(at + 1).trim());
  }
  return tags;
}

const unchecked = (record: RecordKind, name: string, reason: string): RecordCheck => ({
  record,
  status: 'unknown',
  detail: `The DNS lookup of ${name} failed (${reason}); its ${record.toUpperCase()} record could not be checked. Try again in a few minutes.`,
});

export async function checkDkim(lookup: DnsLookup, domain: CheckedDomain): Promise<RecordCheck> {
  const name = dkimRecordName(domain.dkimSelector, domain.name);
  const answer = await lookup.txt(name);
  if (answer.kind === 'error') return unchecked('dkim', name, answer.reason);
  const publish = `Publish a TXT record at ${name} with the DKIM value listed in dnsRecords ("v=DKIM1; k=rsa; p=...").`;
  const candidates = answer.kind === 'found' ? answer.records.map(parseTags).filter((tags) => tags.has('p') || tags.get('v') === 'DKIM1') : [];
  if (candidates.length === 0) return { record: 'dkim', status: 'failed', detail: `No DKIM record found at ${name}. ${publish}` };
  if (candidates.length > 1) {
    return { record: 'dkim', status: 'failed', detail: `${name} has ${candidates.length} DKIM records; keep only the one listed in dnsRecords.` };
  }
  const tags = candidates[0];
  const version = tags.get('v');
  if (version !== undefined && version !== 'DKIM1') {
    return { record: 'dkim', status: 'failed', detail: `The DKIM record at ${name} has v=${version}; it must be v=DKIM1. ${publish}` };
  }
  const keyType = tags.get('k');
  if (keyType !== undefined && keyType.toLowerCase() !== 'rsa') {
    return { record: 'dkim', status: 'failed', detail: `The DKIM record at ${name} has k=${keyType}; this domain's key is RSA, so it must be k=rsa.` };
  }
  // Whitespace inside p= is allowed (RFC 6376 §3.6.1), and DNS consoles often add it when they split long text.
  const published = (tags.get('p') ?? '').replace(/\s+/g, '');
  if (published === '') {
    return { record: 'dkim', status: 'failed', detail: `The DKIM record at ${name} has an empty public key (p=), which means the key is revoked. ${publish}` };
  }
  if (published !== domain.dkimPublicKey) {
    return {
      record: 'dkim',
      status: 'failed',
      detail: `The DKIM record at ${name} carries a different public key than the one generated for ${domain.name}. Replace its value with the DKIM value listed in dnsRecords.`,
    };
  }
  return { record: 'dkim', status: 'verified' };
}

const DMARC_POLICIES = new Set(['none', 'quarantine', 'reject']);

/**
 * A subdomain without a DMARC record of its own is covered by its organisational domain's record
 * (RFC 7489 §6.6.3), so mail.example.com passes with a valid record at _dmarc.example.com.
 */
export async function checkDmarc(lookup: DnsLookup, domainName: string): Promise<RecordCheck> {
  const organisational = organisationalDomain(domainName);
  const owners = organisational === domainName ? [domainName] : [domainName, organisational];
  for (const owner of owners) {
    const name = dmarcRecordName(owner);
    const answer = await lookup.txt(name);
    if (answer.kind === 'error') return unchecked('dmarc', name, answer.reason);
    // §6.6.3: records that do not start with v=DMARC1 are discarded, as if absent.
    const records = answer.kind === 'found' ? answer.records.filter((text) => /^v\s*=\s*DMARC1\s*(;|$)/.test(text.trim())) : [];
    if (records.length === 0) continue;
    if (records.length > 1) {
      return { record: 'dmarc', status: 'failed', detail: `${name} has ${records.length} DMARC records; receivers ignore DMARC when there is more than one. Keep one.` };
    }
    const policy = parseTags(records[0]).get('p');
    if (policy === undefined) {
      return { record: 'dmarc', status: 'failed', detail: `The DMARC record at ${name} has no policy; add p=none (or p=quarantine, p=reject) after v=DMARC1.` };
    }
    if (!DMARC_POLICIES.has(policy.toLowerCase())) {
      return { record: 'dmarc', status: 'failed', detail: `The DMARC record at ${name} has p=${policy}; the policy must be none, quarantine or reject.` };
    }
    return { record: 'dmarc', status: 'verified' };
  }
  const name = dmarcRecordName(domainName);
  return { record: 'dmarc', status: 'failed', detail: `No DMARC record found at ${name}. Publish a TXT record at ${name} with the value "${DMARC_VALUE}".` };
}

/** Inbound mail reaches the platform only when our host is the domain's preferred exchange. */
export async function checkMx(lookup: DnsLookup, domainName: string, inboundHost: string): Promise<RecordCheck> {
  const answer = await lookup.mx(domainName);
  if (answer.kind === 'error') return unchecked('mx', domainName, answer.reason);
  const publish = `Publish an MX record at ${domainName} with priority ${MX_PRIORITY} and the host ${inboundHost}.`;
  const hosts = answer.kind === 'found' ? answer.hosts : [];
  const ours = hosts.filter((host) => sameHost(host.exchange, inboundHost));
  if (ours.length === 0) return { record: 'mx', status: 'failed', detail: `The MX records of ${domainName} do not point to ${inboundHost}. ${publish}` };
  const best = Math.min(...hosts.map((host) => host.priority));
  const preferred = hosts.find((host) => host.priority === best && !sameHost(host.exchange, inboundHost));
  if (Math.min(...ours.map((host) => host.priority)) > best && preferred) {
    return {
      record: 'mx',
      status: 'failed',
      detail: `The MX records of ${domainName} prefer ${preferred.exchange} (priority ${best}) over ${inboundHost}, so inbound mail goes there first; give ${inboundHost} the lowest priority number or remove the other MX records.`,
    };
  }
  return { record: 'mx', status: 'verified' };
}

/**
 * The bounce subdomain's MX (to our inbound host) and SPF, checked like the domain's own and stored with
 * the domain's checks, where sending reads them (core/bounces/return-path.ts, `returnPathDomainOf`).
 */
export async function checkReturnPath(lookup: DnsLookup, domainName: string, settings: RecordSettings): Promise<RecordCheck[]> {
  const bounces = bounceDomainOf(domainName);
  const [mx, spf] = await Promise.all([checkMx(lookup, bounces, settings.inboundMxHost), checkSpf(lookup, bounces, settings.spfInclude)]);
  return [{ ...mx, record: 'return_path_mx' }, { record: 'return_path_spf', ...withoutLookups(spf) }];
}
