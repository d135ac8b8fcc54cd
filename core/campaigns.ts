/**
 * Broadcast campaigns as pure rules (docs/campaigns.md): their statuses, when a send needs the estimate's
 * confirmation, how far ahead of the provider a campaign fills the outbox, and when it pauses itself.
 */

/** The decisions: draft → scheduled → sending → sent; paused while sending; canceled; failed. */
export const CAMPAIGN_STATUSES = ['draft', 'scheduled', 'sending', 'paused', 'sent', 'canceled', 'failed'] as const;
export type CampaignStatus = (typeof CAMPAIGN_STATUSES)[number];

/** A finished campaign changes no more; until then it keeps its template in use. */
export const FINISHED_STATUSES: readonly CampaignStatus[] = ['sent', 'canceled', 'failed'];

/** What POST /campaigns/:id/cancel stops: one that has not started, or has not finished. */
export const CANCELABLE_STATUSES: readonly CampaignStatus[] = ['scheduled', 'sending', 'paused'];

/** The decisions: an immediate send, or one scheduled less than this ahead, needs a confirmation token. */
export const CONFIRMATION_HORIZON_MS = 5 * 60_000;

/** How long the token of an estimate is valid (decisions). */
export const CONFIRMATION_TTL_MS = 10 * 60_000;

/** Whether a send at `scheduledAt` (null: now) must carry the estimate's confirmation token. */
export function needsConfirmation(scheduledAt: Date | null, now: Date): boolean {
  return scheduledAt === null || scheduledAt.getTime() - now.getTime() < CONFIRMATION_HORIZON_MS;
}

export interface CampaignPacing {
  /** Messages per second the provider takes (SEND_RATE_PER_SECOND). */
  ratePerSecond: number;
  /** How much sending a campaign keeps in the outbox and in flight (CAMPAIGN_LEAD_TIME_MS). */
  leadTimeMs: number;
  /** The delivery engine's bulk batch (BULK_BATCH_SIZE): the dispatcher hands these to Temporal whole. */
  batchSize: number;
  /** Most messages written to the outbox by one statement (CAMPAIGN_PAGE_SIZE). */
  pageSize: number;
}

/**
 * How many of a campaign's messages may wait unsent (queued or being sent) at once, and how many one
 * statement writes. The window is the provider's rate over the lead time, and at least two batches, so
 * the dispatcher (which hands Temporal up to `rate × BULK_LEAD_TIME_MS`) always finds the next batch
 * waiting while the last one is sent; it never holds more, so a pause or cancel has little to take back
 * and a million-recipient campaign costs the outbox a minute of sending, not a million rows.
 */
export function outboxWindow(pacing: CampaignPacing): { window: number; page: number } {
  const window = Math.max(2 * pacing.batchSize, Math.ceil((pacing.ratePerSecond * pacing.leadTimeMs) / 1000));
  return { window, page: Math.max(1, Math.min(pacing.pageSize, window)) };
}

export interface AutoPauseThresholds {
  /** Sends needed before the rates mean anything; 0 turns auto-pause off. */
  afterSent: number;
  /** Hard bounces per send above which the campaign pauses (fraction, 0 to 1). */
  bounceRate: number;
  /** Complaints per send above which the campaign pauses. */
  complaintRate: number;
}

export interface SendOutcomes {
  sent: number;
  hardBounces: number;
  complaints: number;
}

const percent = (value: number) => `${(value * 100).toFixed(2).replace(/\.?0+$/, '')}%`;

/**
 * Why a campaign should pause itself now, or null: a bad list shows in its first thousands of sends as
 * hard bounces and complaints, and every further send then spends the sending domain's reputation.
 */
export function autoPauseReason(outcomes: SendOutcomes, thresholds: AutoPauseThresholds): string | null {
  if (thresholds.afterSent <= 0 || outcomes.sent < thresholds.afterSent) return null;
  const bounceRate = outcomes.hardBounces / outcomes.sent;
  if (bounceRate > thresholds.bounceRate) {
    return `hard bounce rate ${percent(bounceRate)} over ${outcomes.sent} sends is above ${percent(thresholds.bounceRate)}`;
  }
  const complaintRate = outcomes.complaints / outcomes.sent;
  if (complaintRate > thresholds.complaintRate) {
    return `complaint rate ${percent(complaintRate)} over ${outcomes.sent} sends is above ${percent(thresholds.complaintRate)}`;
  }
  return null;
}
