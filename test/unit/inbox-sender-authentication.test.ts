import type { InboundAuthResults } from '../../core/inbox/auth-results';
import { authenticateSender, senderMark } from '../../core/inbox/sender-authentication';

/** Verdicts as the listener records them for a message whose one From is `from`. */
function verdicts(from: string, overrides: Partial<InboundAuthResults> = {}): InboundAuthResults {
  return {
    spf: { result: 'none', domain: from.split('@')[1] },
    dkim: [],
    dmarc: { result: 'none', headerFrom: [from], domain: from.split('@')[1], policy: null },
    ...overrides,
  };
}

describe('authenticateSender', () => {
  const from = 'grace@client.example.com';

  it('a From that passes DMARC is authenticated by dmarc', () => {
    const auth = verdicts(from, { dmarc: { result: 'pass', headerFrom: [from], domain: 'example.com', policy: 'reject' } });
    expect(authenticateSender(auth, from)).toEqual({ authenticated: true, by: 'dmarc' });
  });

  it('a DMARC fail is never authenticated, whatever else passed', () => {
    const auth = verdicts(from, { spf: { result: 'pass', domain: 'client.example.com' }, dmarc: { result: 'fail', headerFrom: [from], domain: 'example.com', policy: 'none' } });
    expect(authenticateSender(auth, from)).toEqual({ authenticated: false, reason: 'dmarc_fail' });
  });

  it('without a DMARC record, a passing DKIM signature aligned with the From authenticates it', () => {
    const auth = verdicts(from, { dkim: [{ result: 'pass', domain: 'example.com', aligned: true }] });
    expect(authenticateSender(auth, from)).toEqual({ authenticated: true, by: 'dkim' });
  });

  it('a passing DKIM signature of another domain, or a failing aligned one, does not', () => {
    expect(authenticateSender(verdicts(from, { dkim: [{ result: 'pass', domain: 'esp.example.net', aligned: false }] }), from)).toEqual({ authenticated: false, reason: 'not_aligned' });
    expect(authenticateSender(verdicts(from, { dkim: [{ result: 'fail', domain: 'client.example.com', aligned: true }] }), from)).toEqual({ authenticated: false, reason: 'not_aligned' });
  });

  it('without a DMARC record, SPF passing for the From\'s organizational domain authenticates it', () => {
    expect(authenticateSender(verdicts(from, { spf: { result: 'pass', domain: 'bounces.example.com' } }), from)).toEqual({ authenticated: true, by: 'spf' });
    expect(authenticateSender(verdicts('a@shop.co.uk', { spf: { result: 'pass', domain: 'mail.shop.co.uk' } }), 'a@shop.co.uk')).toEqual({ authenticated: true, by: 'spf' });
  });

  it('SPF passing for another organization (an ESP\'s bounce domain, or a sibling under a public suffix) does not', () => {
    expect(authenticateSender(verdicts(from, { spf: { result: 'pass', domain: 'bounces.esp.example.net' } }), from)).toEqual({ authenticated: false, reason: 'not_aligned' });
    expect(authenticateSender(verdicts('a@shop.co.uk', { spf: { result: 'pass', domain: 'other.co.uk' } }), 'a@shop.co.uk')).toEqual({ authenticated: false, reason: 'not_aligned' });
    expect(authenticateSender(verdicts(from, { spf: { result: 'softfail', domain: 'client.example.com' } }), from)).toEqual({ authenticated: false, reason: 'not_aligned' });
  });

  it('verdicts about another From than the one read (two From fields) authenticate nothing', () => {
    const dmarc = { result: 'pass' as const, headerFrom: ['me@attacker.example', from], domain: 'attacker.example', policy: 'none' };
    expect(authenticateSender(verdicts(from, { dmarc }), from)).toEqual({ authenticated: false, reason: 'from_mismatch' });
    expect(authenticateSender(verdicts('me@attacker.example', { dmarc: { ...dmarc, headerFrom: ['me@attacker.example'] } }), from)).toEqual({ authenticated: false, reason: 'from_mismatch' });
  });

  it('no verdicts or no From is unauthenticated', () => {
    expect(authenticateSender(null, from)).toEqual({ authenticated: false, reason: 'no_evaluation' });
    expect(authenticateSender(verdicts(from), null)).toEqual({ authenticated: false, reason: 'no_evaluation' });
  });

  it('the stored mark says what authenticated the From, or why nothing did, and how it was threaded', () => {
    expect(senderMark({ authenticated: true, by: 'dkim' }, 'subject')).toEqual({ authenticated: true, by: 'dkim', reason: null, threadedBy: 'subject' });
    expect(senderMark({ authenticated: false, reason: 'not_aligned' }, 'new')).toEqual({ authenticated: false, by: null, reason: 'not_aligned', threadedBy: 'new' });
  });
});
