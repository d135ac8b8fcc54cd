import type { Readable } from 'node:stream';
import { authenticate, type DNSResolver } from 'mailauth';
import { authVerdict, type InboundAuthResults } from '../../core/inbox/auth-results';

export interface SenderContext {
  /** The connecting server's address, what SPF is about. */
  ip: string;
  /** What it said in EHLO/HELO. */
  helo: string;
  /** MAIL FROM; null for the null sender `<>`. */
  envelopeFrom: string | null;
}

/**
 * SPF, DKIM and DMARC of one inbound message, by mailauth (an independent implementation of the three, not
 * ours), asking the configured DNS servers. The message may be a stream (the listener's spool file): mailauth
 * hashes the body as it reads. ARC and BIMI are left out: nothing here reads them yet. The
 * evaluation never refuses mail; when it cannot run at all the message is kept with `temperror` verdicts.
 */
export async function evaluateSender(raw: Buffer | Readable, sender: SenderContext, options: { resolver: DNSResolver; mta: string }): Promise<InboundAuthResults> {
  try {
    const result = await authenticate(raw, {
      ip: sender.ip,
      helo: sender.helo,
      // SPF of the null sender is checked against the HELO name (RFC 7208 §2.4); mailauth does that when given none.
      sender: sender.envelopeFrom ?? undefined,
      mta: options.mta,
      resolver: options.resolver,
      disableArc: true,
      disableBimi: true,
    });
    const spf = result.spf || null;
    const dmarc = result.dmarc || null;
    return {
      spf: { result: authVerdict(spf?.status.result), domain: spf?.domain ?? null },
      // An unsigned message comes back as one `none` result without a domain: no signature, so no entry.
      dkim: (result.dkim.results ?? []).filter((signature) => Boolean(signature.signingDomain)).map((signature) => ({
        result: authVerdict(signature.status.result),
        domain: signature.signingDomain,
        aligned: Boolean(signature.status.aligned),
      })),
      dmarc: { result: authVerdict(dmarc?.status.result), headerFrom: result.dkim.headerFrom ?? [], domain: dmarc?.domain ?? null, policy: dmarc?.policy ?? null },
    };
  } catch (error) {
    return {
      spf: { result: 'temperror', domain: null },
      dkim: [],
      dmarc: { result: 'temperror', headerFrom: [], domain: null, policy: null },
      error: error instanceof Error ? error.message : String(error),
    };
  }
}
