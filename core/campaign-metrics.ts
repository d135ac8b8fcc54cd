/**
 * A campaign's figures, from its stored counters (moved by a trigger as message events are stored, never
 * recounted from the messages): the spec's CampaignMetricsSummary and the progress shown while it sends.
 */
export interface CampaignCounters {
  sent: number;
  delivered: number;
  hardBounces: number;
  softBounces: number;
  complaints: number;
  unsubscribes: number;
  failed: number;
  /** Human opens and clicks, every one; non-human ones are never counted. */
  opens: number;
  clicks: number;
  /** Human clicks on content links (not logo, image, header or footer chrome, social). */
  contentClicks: number;
  /** Messages with at least one human open, and with at least one human click. */
  uniqueOpens: number;
  uniqueClicks: number;
}

export const NO_COUNTS: CampaignCounters = {
  sent: 0,
  delivered: 0,
  hardBounces: 0,
  softBounces: 0,
  complaints: 0,
  unsubscribes: 0,
  failed: 0,
  opens: 0,
  clicks: 0,
  contentClicks: 0,
  uniqueOpens: 0,
  uniqueClicks: 0,
};

export interface CampaignMetricsSummary {
  recipients: number;
  delivered: number;
  uniqueOpens: number;
  uniqueClicks: number;
  contentClicks: number;
  unsubscribes: number;
  hardBounces: number;
  softBounces: number;
  openRate: number | null;
  clickRate: number | null;
  clickToOpenRate: number | null;
  unsubscribeRate: number | null;
  bounceRate: number | null;
}

/** A fraction from 0 to 1, or null when there is nothing to divide by (decisions: rates as fractions). */
function rate(part: number, whole: number): number | null {
  return whole > 0 ? part / whole : null;
}

/**
 * The decisions: openRate and clickRate are over delivered, clickToOpenRate is unique clicks over unique
 * opens. Not fixed there, chosen here: unsubscribeRate is over delivered too (whoever could read it), and
 * bounceRate is bounces (hard and soft) over messages handed to the provider, which bounces are answers to.
 */
export function metricsSummary(recipients: number, counts: CampaignCounters): CampaignMetricsSummary {
  return {
    recipients,
    delivered: counts.delivered,
    uniqueOpens: counts.uniqueOpens,
    uniqueClicks: counts.uniqueClicks,
    contentClicks: counts.contentClicks,
    unsubscribes: counts.unsubscribes,
    hardBounces: counts.hardBounces,
    softBounces: counts.softBounces,
    openRate: rate(counts.uniqueOpens, counts.delivered),
    clickRate: rate(counts.uniqueClicks, counts.delivered),
    clickToOpenRate: rate(counts.uniqueClicks, counts.uniqueOpens),
    unsubscribeRate: rate(counts.unsubscribes, counts.delivered),
    bounceRate: rate(counts.hardBounces + counts.softBounces, counts.sent),
  };
}

export interface CampaignProgress {
  recipients: number;
  /** Handed to the provider. */
  sent: number;
  /** Ended without a send (a permanent refusal, a recipient suppressed since the snapshot). */
  failed: number;
  /** Left unsent by a cancel. */
  canceled: number;
  /** Sends per second since the campaign started sending, or null before the first. */
  ratePerSecond: number | null;
  /** When the last recipient should be sent at that rate, while the campaign sends. */
  expectedEndAt: Date | null;
}

/** How far a campaign has come, from its counters, at `now`. */
export function progressOf(
  campaign: { recipients: number; canceled: number; startedAt: Date | null; sending: boolean },
  counts: Pick<CampaignCounters, 'sent' | 'failed'>,
  now: Date,
): CampaignProgress {
  const seconds = campaign.startedAt ? (now.getTime() - campaign.startedAt.getTime()) / 1000 : 0;
  const ratePerSecond = counts.sent > 0 && seconds > 0 ? counts.sent / seconds : null;
  const left = Math.max(0, campaign.recipients - counts.sent - counts.failed - campaign.canceled);
  const expectedEndAt = campaign.sending && ratePerSecond ? new Date(now.getTime() + (left / ratePerSecond) * 1000) : null;
  return { recipients: campaign.recipients, sent: counts.sent, failed: counts.failed, canceled: campaign.canceled, ratePerSecond, expectedEndAt };
}
