import { getDomain } from 'tldts';
import type { InboundAuthResults, SenderMark } from './auth-results';

/**
 * Whether an inbound message's From is the sender's word: the only address a thread or a contact may trust.
 * To and Cc are whatever the sender typed, and a From that its domain does not vouch for is too. DMARC's own
 * test is used even when the domain publishes no DMARC record: a pass of SPF or DKIM for a domain aligned with
 * the From's (the same organizational domain, DMARC's relaxed mode) authenticates it. A DMARC fail never does.
 */
export type SenderAuthentication =
  | { authenticated: true; by: NonNullable<SenderMark['by']> }
  | { authenticated: false; reason: SenderUnauthenticatedReason };

/**
 * `no_evaluation`: the listener recorded no verdicts (or the message has no From); `from_mismatch`: the From the
 * verdicts judged is not exactly the one From we read, as with two From fields (RFC 7489 §6.6.1), where an
 * attacker would have the checks judge one and the inbox show the other; `dmarc_fail`: the From's domain
 * disowns it; `not_aligned`: nothing that passed speaks for the From's domain.
 */
export type SenderUnauthenticatedReason = NonNullable<SenderMark['reason']>;

/** The organizational domain (example.co.uk for mail.example.co.uk), as mailauth's DMARC check computes it. */
function organizationalDomain(domain: string): string {
  const name = domain.trim().toLowerCase().replace(/\.$/, '');
  return getDomain(name, { allowPrivateDomains: true }) ?? name;
}

const domainOf = (address: string) => address.slice(address.lastIndexOf('@') + 1);

export function authenticateSender(auth: InboundAuthResults | null, fromAddress: string | null): SenderAuthentication {
  if (!auth || !fromAddress) return { authenticated: false, reason: 'no_evaluation' };
  const judged = auth.dmarc.headerFrom ?? [];
  if (judged.length !== 1 || judged[0].trim().toLowerCase() !== fromAddress.trim().toLowerCase()) return { authenticated: false, reason: 'from_mismatch' };
  if (auth.dmarc.result === 'fail') return { authenticated: false, reason: 'dmarc_fail' };
  if (auth.dmarc.result === 'pass') return { authenticated: true, by: 'dmarc' };
  // mailauth marks a signature aligned against the judged From's domain, which is checked above to be ours.
  if (auth.dkim.some((signature) => signature.result === 'pass' && signature.aligned)) return { authenticated: true, by: 'dkim' };
  const fromOrganization = organizationalDomain(domainOf(fromAddress));
  if (auth.spf.result === 'pass' && auth.spf.domain && organizationalDomain(auth.spf.domain) === fromOrganization) return { authenticated: true, by: 'spf' };
  return { authenticated: false, reason: 'not_aligned' };
}

/** The mark stored with the processed message (`auth.sender`). */
export function senderMark(authentication: SenderAuthentication, threadedBy: SenderMark['threadedBy']): SenderMark {
  return authentication.authenticated
    ? { authenticated: true, by: authentication.by, reason: null, threadedBy }
    : { authenticated: false, by: null, reason: authentication.reason, threadedBy };
}
