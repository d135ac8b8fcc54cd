import { BURST_WINDOW_MS, classifyHit, DELIVERY_GRACE_MS, type Hit, otherLinksNear } from '../../core/tracking/classification';
import { HIT_FIXTURES, offsetsOf } from '../helpers/tracking-fixtures';

const sentAt = Date.parse('2026-03-02T09:00:00Z');
const chrome = 'Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/124.0.0.0 Safari/537.36';
const hit = (overrides: Partial<Hit> = {}): Hit => ({ kind: 'click', method: 'GET', userAgent: chrome, ip: '198.51.100.1', at: sentAt + 3_600_000, honeypot: false, ...overrides });
const alone = { sentAt, otherLinksNearby: 0 };

describe('classification of the recorded requests', () => {
  it.each(Object.entries(HIT_FIXTURES))('%s lands in its class with its reason', (_name, fixture) => {
    const offsets = offsetsOf(fixture);
    const clicks = offsets.map((offset, position) => ({ position, at: sentAt + offset }));
    for (const click of clicks) {
      const verdict = classifyHit(
        { kind: fixture.kind, method: fixture.method, userAgent: fixture.userAgent, ip: fixture.ip, at: click.at, honeypot: fixture.honeypot ?? false },
        { sentAt, otherLinksNearby: fixture.kind === 'click' ? otherLinksNear(clicks, click) : 0 },
      );
      expect(verdict).toEqual(fixture.expect);
    }
  });
});

describe('the rules one by one', () => {
  it('a HEAD request is a bot, whoever sends it', () => {
    expect(classifyHit(hit({ method: 'HEAD', kind: 'open' }), alone)).toEqual({ classification: 'bot', reason: 'head-request' });
  });

  it("an open with Apple's minimal agent from elsewhere is still the privacy proxy", () => {
    expect(classifyHit(hit({ kind: 'open', userAgent: 'Mozilla/5.0' }), alone)).toEqual({ classification: 'prefetch', reason: 'apple-privacy-proxy-agent' });
  });

  it("an open from Apple's network over IPv6 or as an IPv4-mapped address is the privacy proxy", () => {
    expect(classifyHit(hit({ kind: 'open', ip: '2620:149:a:b::1' }), alone).classification).toBe('prefetch');
    expect(classifyHit(hit({ kind: 'open', ip: '::ffff:17.1.2.3' }), alone).classification).toBe('prefetch');
  });

  it('a mail security gateway is a bot, by network or by name', () => {
    expect(classifyHit(hit({ ip: '40.107.22.5' }), alone)).toEqual({ classification: 'bot', reason: 'scanner-network' });
    expect(classifyHit(hit({ userAgent: 'Mozilla/5.0 (compatible; Barracuda Sentinel (EE))' }), alone)).toEqual({ classification: 'bot', reason: 'scanner-user-agent' });
  });

  it('an automated agent fetching the pixel is a machine; following a link, a bot', () => {
    const curl = { userAgent: 'curl/8.5.0' };
    expect(classifyHit(hit({ ...curl, kind: 'open' }), alone)).toEqual({ classification: 'machine', reason: 'automated-user-agent' });
    expect(classifyHit(hit({ ...curl }), alone)).toEqual({ classification: 'bot', reason: 'automated-user-agent' });
    expect(classifyHit(hit({ userAgent: '' }), alone).classification).toBe('bot');
  });

  it('a click within the grace period after sending is a bot, one after it is not; one before the send was recorded is', () => {
    expect(classifyHit(hit({ at: sentAt + DELIVERY_GRACE_MS - 1 }), alone).reason).toBe('click-at-delivery');
    expect(classifyHit(hit({ at: sentAt + DELIVERY_GRACE_MS }), alone).classification).toBe('human');
    expect(classifyHit(hit(), { sentAt: null, otherLinksNearby: 0 }).reason).toBe('click-at-delivery');
  });

  it('two different links within a second are a bot; the same link twice is a person clicking again', () => {
    const at = sentAt + 3_600_000;
    expect(otherLinksNear([{ position: 0, at }, { position: 1, at: at + BURST_WINDOW_MS }], { position: 0, at })).toBe(1);
    expect(otherLinksNear([{ position: 0, at }, { position: 0, at: at + 200 }], { position: 0, at })).toBe(0);
    expect(otherLinksNear([{ position: 0, at }, { position: 1, at: at + BURST_WINDOW_MS + 1 }], { position: 0, at })).toBe(0);
    expect(classifyHit(hit({ at }), { sentAt, otherLinksNearby: 1 })).toEqual({ classification: 'bot', reason: 'link-burst' });
  });

  it('opens are never judged by timing', () => {
    expect(classifyHit(hit({ kind: 'open', at: sentAt + 100 }), { sentAt: null, otherLinksNearby: 3 })).toEqual({ classification: 'human', reason: 'no-automation-sign' });
  });
});
