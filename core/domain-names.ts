import { domainToASCII } from 'node:url';
import { parse } from 'tldts';

/**
 * Sending domain names. A workspace adds a domain it can publish DNS records for: a registrable domain
 * (example.com) or a subdomain of one (mail.example.com), never a public suffix (co.uk), an IP address or
 * a name under a suffix nobody can register (localhost, .local, .internal). Names are stored in one form,
 * lower-case A-labels without a trailing dot, so uniqueness across workspaces is a plain unique index.
 */
export const MAX_NAME_LENGTH = 253;
export const MAX_LABEL_LENGTH = 63;

export type DomainNameResult = { ok: true; name: string } | { ok: false; problem: string };

const LDH_LABEL = /^[a-z0-9](?:[a-z0-9-]*[a-z0-9])?$/;
const IPV4_LIKE = /^[0-9.]+$/;

export function normaliseDomainName(input: string): DomainNameResult {
  const given = input.trim();
  if (given === '') return { ok: false, problem: 'A domain name is required' };
  if (IPV4_LIKE.test(given) || parse(given).isIp) {
    return { ok: false, problem: `${given} is an IP address; add a domain name such as example.com` };
  }
  // tldts reads past a port or a path; a domain name has neither.
  if (/[:/@\\\s]/.test(given)) {
    return { ok: false, problem: `${given} contains characters that are not allowed in a domain name` };
  }
  // One trailing dot is the DNS root (fully qualified form); it is not part of the stored name.
  const ascii = domainToASCII(given.endsWith('.') ? given.slice(0, -1) : given).toLowerCase();
  if (ascii === '') return { ok: false, problem: `${given} contains characters that are not allowed in a domain name` };
  // WHATWG host parsing reads forms like 0x7f.1 as IPv4, which the checks above cannot see in the input.
  if (parse(ascii).isIp || IPV4_LIKE.test(ascii)) {
    return { ok: false, problem: `${given} is an IP address; add a domain name such as example.com` };
  }
  if (ascii.length > MAX_NAME_LENGTH) {
    return { ok: false, problem: `The domain name is ${ascii.length} characters long; at most ${MAX_NAME_LENGTH} are allowed` };
  }
  const labels = ascii.split('.');
  for (const label of labels) {
    if (label.length > MAX_LABEL_LENGTH) {
      return { ok: false, problem: `The label ${label} is ${label.length} characters long; a label may have at most ${MAX_LABEL_LENGTH}` };
    }
    if (!LDH_LABEL.test(label)) {
      return {
        ok: false,
        problem: label === ''
          ? `${given} has an empty label (two dots in a row, or a leading dot)`
          : `The label ${label} may contain only letters, digits and inner hyphens`,
      };
    }
  }
  const parts = parse(ascii);
  if (!parts.isIcann || !parts.publicSuffix) {
    return { ok: false, problem: `${given} is not under a public domain suffix (such as .com or .co.uk)` };
  }
  if (!parts.domain) {
    return { ok: false, problem: `${given} is a public suffix, not a domain that can be registered; add a domain under it` };
  }
  return { ok: true, name: ascii };
}

/**
 * The registrable domain a name belongs to (mail.example.co.uk → example.co.uk): where DMARC looks for a
 * policy when the name has none of its own (RFC 7489 §6.6.3). Expects a normalised name.
 */
export function organisationalDomain(name: string): string {
  return parse(name).domain ?? name;
}
