/**
 * What the SMTP listener found out about the sender (SPF, DKIM, DMARC), kept with each inbound message as
 * evaluated (`inbox_messages.auth`). The listener never refuses on these: a failing spoof is accepted and
 * flagged, so a person or agent sees it marked rather than losing mail to a misconfigured sender.
 */
export type AuthVerdict = 'pass' | 'fail' | 'neutral' | 'none' | 'temperror' | 'permerror' | 'policy' | 'softfail' | 'skipped';

export interface InboundAuthResults {
  spf: { result: AuthVerdict; domain: string | null };
  dkim: { result: AuthVerdict; domain: string; aligned: boolean }[];
  /**
   * `headerFrom`: the From address(es) DMARC judged; `domain`: the organizational domain whose record applied
   * (mail.example.com is judged by example.com's policy when it has none of its own).
   */
  dmarc: { result: AuthVerdict; headerFrom: string[]; domain: string | null; policy: string | null };
  /** Set when the evaluation itself could not run (the verdicts above are then `temperror`). */
  error?: string;
  /** Added when the message is processed: what the verdicts mean for its From (sender-authentication.ts). */
  sender?: SenderMark;
}

/**
 * Whether the From was authenticated (`by` dmarc, dkim or spf) or not (`reason`), and how the message found its
 * thread. Unauthenticated mail is kept and shown with this mark; it is linked to no contact and fires nothing.
 */
export interface SenderMark {
  authenticated: boolean;
  by: 'dmarc' | 'dkim' | 'spf' | null;
  reason: 'no_evaluation' | 'from_mismatch' | 'dmarc_fail' | 'not_aligned' | null;
  threadedBy: 'reference' | 'subject' | 'new';
}

/** A DMARC failure of the From domain: the message claims a sender whose domain does not vouch for it. */
export function isDmarcFailure(auth: InboundAuthResults | null): boolean {
  return auth?.dmarc.result === 'fail';
}

/** mailauth spells a temporary error both ways; one spelling is kept. */
export function authVerdict(value: string | undefined): AuthVerdict {
  if (value === 'temperr') return 'temperror';
  const known: readonly string[] = ['pass', 'fail', 'neutral', 'none', 'temperror', 'permerror', 'policy', 'softfail', 'skipped'];
  return value && known.includes(value) ? (value as AuthVerdict) : 'none';
}
