import { bounceDomainOf } from './bounces/return-path';

/**
 * The DNS records a workspace publishes for a sending domain (decisions: SPF, DKIM, DMARC and, once
 * inbound is enabled, MX), and the same records as a BIND zone-file snippet to paste or import. A domain
 * that does not receive at our MX also gets its bounce subdomain's MX and SPF (`return_path_mx`,
 * `return_path_spf`): where SMTP bounces come back (docs/emails.md). They are optional: they never decide
 * the domain's status, only whether its mail carries a VERP return path.
 */
export type RecordKind = 'spf' | 'dkim' | 'dmarc' | 'mx' | 'return_path_mx' | 'return_path_spf';

/** Records that inform (VERP return paths) and never fail a domain's verification. */
export const OPTIONAL_RECORDS: readonly RecordKind[] = ['return_path_mx', 'return_path_spf'];

export interface DnsRecord {
  record: RecordKind;
  type: 'TXT' | 'MX';
  /** Fully qualified, without the trailing dot. */
  name: string;
  /** The TXT text as one string, or the MX host. */
  value: string;
  /** MX only. */
  priority?: number;
  ttl: number;
}

/** Deployment settings: the platform's SPF include host and inbound MX host. */
export interface RecordSettings {
  spfInclude: string;
  inboundMxHost: string;
}

export interface RecordSource {
  name: string;
  dkimSelector: string;
  dkimPublicKey: string;
  inboundEnabled: boolean;
}

export const RECORD_TTL = 3600;
export const MX_PRIORITY = 10;
/** The DMARC record we suggest: monitoring only, relaxed alignment, so publishing it never blocks mail. */
export const DMARC_VALUE = 'v=DMARC1; p=none; adkim=r; aspf=r';
/** RFC 1035 §3.3: one TXT character-string holds at most 255 octets; longer text is split into several. */
const TXT_STRING_MAX = 255;

export const spfValue = (include: string): string => `v=spf1 include:${include} ~all`;
export const dkimValue = (publicKey: string): string => `v=DKIM1; k=rsa; p=${publicKey}`;
export const dkimRecordName = (selector: string, domain: string): string => `${selector}._domainkey.${domain}`;
export const dmarcRecordName = (domain: string): string => `_dmarc.${domain}`;

export function domainRecords(source: RecordSource, settings: RecordSettings): DnsRecord[] {
  const records: DnsRecord[] = [
    { record: 'spf', type: 'TXT', name: source.name, value: spfValue(settings.spfInclude), ttl: RECORD_TTL },
    {
      record: 'dkim',
      type: 'TXT',
      name: dkimRecordName(source.dkimSelector, source.name),
      value: dkimValue(source.dkimPublicKey),
      ttl: RECORD_TTL,
    },
    { record: 'dmarc', type: 'TXT', name: dmarcRecordName(source.name), value: DMARC_VALUE, ttl: RECORD_TTL },
  ];
  if (source.inboundEnabled) {
    records.push({ record: 'mx', type: 'MX', name: source.name, value: settings.inboundMxHost, priority: MX_PRIORITY, ttl: RECORD_TTL });
  } else {
    // Without inbound, bounces come back to a subdomain of its own whose MX is ours (the domain's own MX
    // stays the customer's); its SPF makes the VERP envelope sender pass SPF.
    const bounces = bounceDomainOf(source.name);
    records.push(
      { record: 'return_path_mx', type: 'MX', name: bounces, value: settings.inboundMxHost, priority: MX_PRIORITY, ttl: RECORD_TTL },
      { record: 'return_path_spf', type: 'TXT', name: bounces, value: spfValue(settings.spfInclude), ttl: RECORD_TTL },
    );
  }
  return records;
}

/** Splits TXT text into quoted character-strings of at most 255 octets, as zone files and DNS carry it. */
export function txtStrings(text: string): string[] {
  const strings: string[] = [];
  for (let start = 0; start < text.length; start += TXT_STRING_MAX) strings.push(text.slice(start, start + TXT_STRING_MAX));
  return strings.length ? strings : [''];
}

const quote = (text: string): string => `"${text.replace(/["\\]/g, (char) => `\\${char}`)}"`;

/** The records as BIND zone-file lines with absolute names, so they paste into any zone unchanged. */
export function zoneFile(domain: string, records: readonly DnsRecord[]): string {
  const owner = (record: DnsRecord) => `${record.name}.`;
  const width = Math.max(...records.map((record) => owner(record).length));
  const lines = records.map((record) => {
    const head = `${owner(record).padEnd(width)} ${record.ttl} IN ${record.type.padEnd(3)}`;
    if (record.type === 'MX') return `${head} ${record.priority ?? MX_PRIORITY} ${record.value}.`;
    const strings = txtStrings(record.value).map(quote);
    return strings.length === 1 ? `${head} ${strings[0]}` : `${head} ( ${strings.join(' ')} )`;
  });
  const extra = records.some((r) => r.record === 'mx') ? ', inbound MX' : records.some((r) => r.record === 'return_path_mx') ? ', bounce return path' : '';
  return [`; Records to publish for ${domain} (SPF, DKIM, DMARC${extra})`, ...lines, ''].join('\n');
}
