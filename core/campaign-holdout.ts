import { createHash } from 'node:crypto';

/**
 * A campaign's holdout: a random share of its audience kept out of the send, so the conversions of the
 * people it reached can be compared with those of people like them it did not (lift).
 *
 * Who is held out is a pure function of (campaign, contact): the first 28 bits of md5("<campaign>:<contact>")
 * give a bucket 0..9999, and a contact is held out when its bucket is below percent × 100. A retried snapshot
 * therefore picks the same people, the share is exact in expectation (each contact independently), and the
 * same formula runs in SQL (`HELD_OUT_SQL`), so the estimate and the snapshot agree with this one.
 */

/** The most of an audience a campaign may hold out: past half, the campaign is the control group. */
export const MAX_HOLDOUT_PERCENT = 50;
/** Buckets per contact: a percent is 100 of them, so whole percents are exact. */
export const HOLDOUT_BUCKETS = 10_000;

/** The contact's bucket for the campaign, 0..9999. uuids as PostgreSQL prints them (lower case). */
export function holdoutBucket(campaignId: string, contactId: string): number {
  const digest = createHash('md5').update(`${campaignId.toLowerCase()}:${contactId.toLowerCase()}`).digest('hex');
  // 7 hex digits: 28 bits, always a positive int in SQL too (bit(28)::int).
  return Number.parseInt(digest.slice(0, 7), 16) % HOLDOUT_BUCKETS;
}

/** Whether the campaign holds this contact out of its send. */
export function isHeldOut(campaignId: string, contactId: string, percent: number): boolean {
  return percent > 0 && holdoutBucket(campaignId, contactId) < percent * (HOLDOUT_BUCKETS / 100);
}

/**
 * The same test as SQL, over a campaign id and a contact id expression and a percent (bind parameters or
 * columns; only these fixed shapes reach SQL).
 */
export function heldOutSql(campaign: string, contact: string, percent: string): string {
  return `(('x' || substr(md5(${campaign}::text || ':' || ${contact}::text), 1, 7))::bit(28)::int % ${HOLDOUT_BUCKETS} < ${percent} * ${HOLDOUT_BUCKETS / 100})`;
}

/** A fraction of the group, or null for an empty group. */
export function groupRate(part: number, recipients: number): number | null {
  return recipients > 0 ? part / recipients : null;
}

/**
 * Relative lift of the sent group's conversion rate over the holdout's: (sent − holdout) / holdout. Null
 * without a holdout group or when nobody in it converted (no baseline to divide by).
 */
export function conversionLift(sentRate: number | null, holdoutRate: number | null): number | null {
  if (sentRate === null || holdoutRate === null || holdoutRate === 0) return null;
  return (sentRate - holdoutRate) / holdoutRate;
}
