import { creditTouches, type Touch } from '../../core/attribution/models';

const at = new Date('2026-11-20T12:00:00Z');
const hoursBefore = (hours: number) => new Date(at.getTime() - hours * 3_600_000);
const touch = (id: string, hours: number, extra: Partial<Touch> = {}): Touch => ({
  id, occurredAt: hoursBefore(hours), isContent: true, kind: 'campaign', messageId: `m-${id}`, campaignId: 'c1', automationId: null, ...extra,
});

describe('attribution models', () => {
  const touches = [
    touch('early', 100),
    touch('logo', 10, { isContent: false }),
    touch('cta', 20),
    touch('receipt', 5, { kind: 'transactional', campaignId: null }),
    touch('after', -1),
    touch('outside', 24 * 6),
  ];

  it('last_content_click → the last content click of a marketing message in the window, never the logo, a transactional send or a later click', () => {
    expect(creditTouches('last_content_click', touches, at, 5).map((credit) => [credit.touch.id, credit.share])).toEqual([['cta', 1]]);
  });

  it('first_touch and last_touch → the first and last marketing click in the window, content or not', () => {
    expect(creditTouches('first_touch', touches, at, 5).map((credit) => credit.touch.id)).toEqual(['early']);
    expect(creditTouches('last_touch', touches, at, 5).map((credit) => credit.touch.id)).toEqual(['logo']);
  });

  it('linear → an equal share for each marketing click in the window, summing to 1', () => {
    const credits = creditTouches('linear', touches, at, 5);
    expect(credits.map((credit) => credit.touch.id)).toEqual(['early', 'cta', 'logo']);
    expect(credits.reduce((sum, credit) => sum + credit.share, 0)).toBeCloseTo(1);
  });

  it('no eligible click (only a logo, or everything outside the window) → unattributed', () => {
    expect(creditTouches('last_content_click', [touch('logo', 1, { isContent: false })], at, 5)).toEqual([]);
    expect(creditTouches('linear', [touch('old', 24 * 5 + 1)], at, 5)).toEqual([]);
  });

  it('a click exactly at the window start does not count; one at the conversion moment does', () => {
    expect(creditTouches('last_touch', [touch('edge', 24 * 5)], at, 5)).toEqual([]);
    expect(creditTouches('last_touch', [touch('now', 0)], at, 5).map((credit) => credit.touch.id)).toEqual(['now']);
  });
});
