import fixtures from '../fixtures/tracking/hits.json';

/** A recorded tracking request (test/fixtures/tracking/hits.json) and the class it must land in. */
export interface HitFixture {
  kind: 'open' | 'click';
  method: string;
  ip: string;
  userAgent: string;
  /** When after the send it came; a scanner's several clicks, one per link. */
  afterSentMs: number | number[];
  honeypot?: boolean;
  expect: { classification: string; reason: string };
}

export const HIT_FIXTURES = {
  applePrivacyProxyPrefetch: fixtures.applePrivacyProxyPrefetch as HitFixture,
  googleImageProxy: fixtures.googleImageProxy as HitFixture,
  headRequest: fixtures.headRequest as HitFixture,
  scannerClickingEveryLink: fixtures.scannerClickingEveryLink as HitFixture,
  honeypotLink: fixtures.honeypotLink as HitFixture,
  personClickingCta: fixtures.personClickingCta as HitFixture,
};

export const offsetsOf = (fixture: HitFixture): number[] => ([] as number[]).concat(fixture.afterSentMs);
