import { createHash, randomUUID } from 'node:crypto';
import { conversionLift, groupRate, holdoutBucket, isHeldOut } from '../../core/campaign-holdout';

describe('the holdout pick', () => {
  const campaignId = '6f1c1a52-0c53-4e0b-9d5e-3f1f6c3b2a10';

  it('a bucket is the first 28 bits of md5("<campaign>:<contact>") mod 10000, whatever the case of the ids', () => {
    const contactId = 'a3d3b1f0-9b6e-4c8e-8f57-1d2c3b4a5e6f';
    const digest = createHash('md5').update(`${campaignId}:${contactId}`).digest('hex');
    expect(holdoutBucket(campaignId, contactId)).toBe(Number.parseInt(digest.slice(0, 7), 16) % 10_000);
    expect(holdoutBucket(campaignId.toUpperCase(), contactId.toUpperCase())).toBe(holdoutBucket(campaignId, contactId));
    // The value PostgreSQL computes for the same pair: ('x' || substr(md5('a:b'), 1, 7))::bit(28)::int % 10000.
    expect(holdoutBucket('a', 'b')).toBe(226582729 % 10_000);
  });

  it('the same contact is picked the same way every time, and differently by another campaign', () => {
    const contacts = Array.from({ length: 2_000 }, () => randomUUID());
    const first = contacts.filter((contact) => isHeldOut(campaignId, contact, 20));
    expect(contacts.filter((contact) => isHeldOut(campaignId, contact, 20))).toEqual(first);
    const other = contacts.filter((contact) => isHeldOut(randomUUID(), contact, 20));
    expect(other).not.toEqual(first);
  });

  it('0 holds nobody out; a contact held out at p% is held out at every larger percent', () => {
    const contacts = Array.from({ length: 2_000 }, () => randomUUID());
    expect(contacts.filter((contact) => isHeldOut(campaignId, contact, 0))).toEqual([]);
    for (const contact of contacts) {
      if (isHeldOut(campaignId, contact, 10)) expect(isHeldOut(campaignId, contact, 11)).toBe(true);
      expect(isHeldOut(campaignId, contact, 50)).toBe(holdoutBucket(campaignId, contact) < 5_000);
    }
  });

  it('the share held out is the percent, within 4 standard deviations, over 20,000 contacts', () => {
    const contacts = Array.from({ length: 20_000 }, () => randomUUID());
    for (const percent of [1, 10, 25, 50]) {
      const p = percent / 100;
      const held = contacts.filter((contact) => isHeldOut(campaignId, contact, percent)).length;
      const sd = Math.sqrt(contacts.length * p * (1 - p));
      expect(Math.abs(held - contacts.length * p)).toBeLessThan(4 * sd);
    }
  });
});

describe('lift', () => {
  it('is the relative difference of the two rates; null without a holdout or when none of it converted', () => {
    expect(groupRate(3, 12)).toBe(0.25);
    expect(groupRate(0, 0)).toBeNull();
    expect(conversionLift(0.3, 0.2)).toBeCloseTo(0.5, 12);
    expect(conversionLift(0.1, 0.2)).toBeCloseTo(-0.5, 12);
    expect(conversionLift(0, 0.2)).toBe(-1);
    expect(conversionLift(0.3, 0)).toBeNull();
    expect(conversionLift(0.3, null)).toBeNull();
    expect(conversionLift(null, 0.2)).toBeNull();
  });
});
