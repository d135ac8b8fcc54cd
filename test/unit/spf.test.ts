import { checkSpf, parseSpf, spfRecordsOf } from '../../core/spf';
import { memoryDns } from '../helpers/memory-dns';

const OURS = 'spf.messaging.local';

describe('SPF parsing', () => {
  it('reads qualifiers, mechanisms with values and modifiers', () => {
    expect(parseSpf('v=spf1 ip4:192.0.2.0/24 -include:x.example a/24 redirect=_spf.example ~all')).toEqual({
      ok: true,
      terms: [
        { kind: 'mechanism', qualifier: '+', name: 'ip4', value: '192.0.2.0/24' },
        { kind: 'mechanism', qualifier: '-', name: 'include', value: 'x.example' },
        { kind: 'mechanism', qualifier: '+', name: 'a', value: '24' },
        { kind: 'modifier', name: 'redirect', value: '_spf.example' },
        { kind: 'mechanism', qualifier: '~', name: 'all', value: null },
      ],
    });
  });

  it('an unknown mechanism makes the record invalid', () => {
    expect(parseSpf('v=spf1 inclde:x.example ~all')).toEqual({ ok: false, problem: 'it contains the unknown term "inclde:x.example"' });
  });

  it('only TXT texts starting with v=spf1 are SPF records', () => {
    expect(spfRecordsOf(['google-site-verification=abc', 'V=SPF1 -all', 'v=spf10 x', 'v=spf1'])).toEqual(['V=SPF1 -all', 'v=spf1']);
  });
});

describe('SPF check', () => {
  it('passes with our include before all, counting one lookup for it', async () => {
    const { lookup } = memoryDns({ txt: { 'example.com': ['v=spf1 include:spf.messaging.local ~all'] } });
    expect(await checkSpf(lookup, 'example.com', OURS)).toEqual({ status: 'verified', lookups: 1 });
  });

  it('passes when our include is reached through the customer\'s own include', async () => {
    const { lookup } = memoryDns({
      txt: { 'example.com': ['v=spf1 include:_spf.example.com -all'], '_spf.example.com': ['v=spf1 ip4:192.0.2.1 include:SPF.messaging.local. ~all'] },
    });
    expect(await checkSpf(lookup, 'example.com', OURS)).toEqual({ status: 'verified', lookups: 2 });
  });

  it('fails without our include, quoting the record and saying what to add', async () => {
    const { lookup } = memoryDns({ txt: { 'example.com': ['v=spf1 include:_spf.google.com ~all'], '_spf.google.com': ['v=spf1 ip4:192.0.2.0/24 ~all'] } });
    expect(await checkSpf(lookup, 'example.com', OURS)).toEqual({
      status: 'failed',
      lookups: 1,
      detail: 'The SPF record of example.com ("v=spf1 include:_spf.google.com ~all") does not include spf.messaging.local; add include:spf.messaging.local before ~all.',
    });
  });

  it('fails when there is no SPF record, giving the record to publish', async () => {
    const { lookup } = memoryDns({ txt: { 'example.com': ['some-verification=1'] } });
    expect(await checkSpf(lookup, 'example.com', OURS)).toMatchObject({
      status: 'failed',
      detail: 'No SPF record found at example.com. Publish a TXT record at example.com with the value "v=spf1 include:spf.messaging.local ~all".',
    });
  });

  it('fails with two SPF records, which receivers treat as an error', async () => {
    const { lookup } = memoryDns({ txt: { 'example.com': ['v=spf1 include:spf.messaging.local ~all', 'v=spf1 mx -all'] } });
    expect(await checkSpf(lookup, 'example.com', OURS)).toMatchObject({ status: 'failed', detail: expect.stringMatching(/^example\.com has 2 SPF records/) });
  });

  it('fails when our include comes after all, or carries a qualifier that does not authorise', async () => {
    const after = memoryDns({ txt: { 'example.com': ['v=spf1 mx -all include:spf.messaging.local'] } });
    expect(await checkSpf(after.lookup, 'example.com', OURS)).toMatchObject({
      status: 'failed',
      detail: 'include:spf.messaging.local comes after "all" in the SPF record of example.com, so receivers never reach it; move it before ~all.',
    });
    const softfail = memoryDns({ txt: { 'example.com': ['v=spf1 ~include:spf.messaging.local -all'] } });
    expect(await checkSpf(softfail.lookup, 'example.com', OURS)).toMatchObject({ status: 'failed', detail: expect.stringMatching(/~include:spf\.messaging\.local, which does not authorise/) });
  });

  it('counts include, a, mx, ptr, exists and redirect through every include and fails past 10', async () => {
    const chain: Record<string, string[]> = {
      'example.com': ['v=spf1 a mx include:one.example include:spf.messaging.local ~all'],
      'one.example': ['v=spf1 a mx ptr exists:%{i}.x.example include:two.example -all'],
      'two.example': ['v=spf1 ip4:192.0.2.1 redirect=three.example'],
      'three.example': ['v=spf1 a mx ip6:2001:db8::/32 -all'],
    };
    const { lookup } = memoryDns({ txt: chain });
    // a, mx, include:one (3) + a, mx, ptr, exists, include:two (8) + redirect (9) + a, mx (11): over the limit.
    const verdict = await checkSpf(lookup, 'example.com', OURS);
    expect(verdict).toMatchObject({ status: 'failed', detail: expect.stringMatching(/^The SPF record of example\.com needs more than 10 DNS lookups/) });
    expect(verdict.lookups).toBe(11);

    const { lookup: withinLimit } = memoryDns({ txt: { ...chain, 'three.example': ['v=spf1 ip6:2001:db8::/32 -all'] } });
    expect(await checkSpf(withinLimit, 'example.com', OURS)).toEqual({ status: 'verified', lookups: 10 });
  });

  it('an include loop ends at the limit instead of running forever', async () => {
    const { lookup, queries } = memoryDns({
      txt: { 'example.com': ['v=spf1 include:spf.messaging.local include:loop.example ~all'], 'loop.example': ['v=spf1 include:loop.example -all'] },
    });
    expect(await checkSpf(lookup, 'example.com', OURS)).toMatchObject({ status: 'failed', lookups: 11 });
    expect(queries.length).toBeLessThan(15);
  });

  it('an include of a domain without SPF is an error the customer can act on', async () => {
    const { lookup } = memoryDns({ txt: { 'example.com': ['v=spf1 include:gone.example include:spf.messaging.local ~all'] } });
    expect(await checkSpf(lookup, 'example.com', OURS)).toMatchObject({
      status: 'failed',
      detail: 'include:gone.example in the SPF policy names gone.example, which has no SPF record; receivers treat that as an error. Remove it or fix that domain\'s SPF record.',
    });
  });

  it('our own include is never blamed, even when it does not resolve', async () => {
    const { lookup } = memoryDns({ txt: { 'example.com': ['v=spf1 include:spf.messaging.local -all'] }, failing: [OURS] });
    expect(await checkSpf(lookup, 'example.com', OURS)).toEqual({ status: 'verified', lookups: 1 });
  });

  it('a lookup that gets no answer leaves SPF unknown, not failed', async () => {
    const { lookup } = memoryDns({ failing: ['example.com'] });
    expect(await checkSpf(lookup, 'example.com', OURS)).toMatchObject({ status: 'unknown', detail: expect.stringMatching(/SPF could not be checked/) });
  });
});
