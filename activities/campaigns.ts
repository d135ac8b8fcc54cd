import { Context } from '@temporalio/activity';
import type { Sequelize } from 'sequelize';
import { type AutoPauseThresholds, autoPauseReason, type CampaignStatus, outboxWindow } from '../core/campaigns';
import type { Config } from '../core/config';
import { completeCampaign, holdWaitingMessages, readFeedState } from '../db/repositories/campaign-feed';
import { takeSnapshot } from '../db/repositories/campaign-snapshot';
import { pauseCampaign } from '../db/repositories/campaign-transitions';
import { acceptCampaignPage } from '../services/acceptance/campaign-page';

export interface CampaignFeedSettings {
  /** Most messages of one campaign waiting unsent at once (core/campaigns.ts `outboxWindow`). */
  window: number;
  /** Most messages one statement writes. */
  page: number;
  autoPause: AutoPauseThresholds;
  /** How long one feed activity runs before it hands back to its workflow (a few history events each). */
  sliceMs: number;
  /** How long the feed waits when the window is full, before it looks again. */
  pollMs: number;
}

/** The feed as the deployment configures it; `timing` shortens the slice and poll in tests. */
export function campaignFeedSettings(config: Config, timing: Partial<Pick<CampaignFeedSettings, 'sliceMs' | 'pollMs'>> = {}): CampaignFeedSettings {
  const { window, page } = outboxWindow({
    ratePerSecond: config.SEND_RATE_PER_SECOND,
    leadTimeMs: config.CAMPAIGN_LEAD_TIME_MS,
    batchSize: config.BULK_BATCH_SIZE,
    pageSize: config.CAMPAIGN_PAGE_SIZE,
  });
  return {
    window,
    page,
    autoPause: {
      afterSent: config.CAMPAIGN_AUTO_PAUSE_AFTER,
      bounceRate: config.CAMPAIGN_AUTO_PAUSE_BOUNCE_RATE,
      complaintRate: config.CAMPAIGN_AUTO_PAUSE_COMPLAINT_RATE,
    },
    sliceMs: timing.sliceMs ?? 60_000,
    pollMs: timing.pollMs ?? 1_000,
  };
}

export interface CampaignActivityDeps {
  db: Sequelize;
  settings: CampaignFeedSettings;
}

/** What the workflow learns from the snapshot; dates travel as ISO strings. */
export type SnapshotResult =
  | { state: 'ready'; recipients: number }
  | { state: 'waiting'; scheduledAt: string }
  | { state: 'stopped'; status: CampaignStatus };

export interface FeedInput {
  workspaceId: string;
  campaignId: string;
  /** Recipients already written to the outbox (the workflow's cursor). */
  cursor: number;
}

export interface FeedResult {
  cursor: number;
  /**
   * `more`: the slice ended, call again; `paused`: wait for a resume; `waiting`: the next recipient is due
   * at `nextAt` (ISO 8601; a local send time), call again then; `done`: the campaign ended with `status`.
   */
  state: 'more' | 'paused' | 'waiting' | 'done';
  status: CampaignStatus;
  nextAt?: string;
}

export function createCampaignActivities({ db, settings }: CampaignActivityDeps) {
  return {
    /** Writes the audience to the campaign's recipients and reserves their quota (db/repositories/campaign-snapshot.ts). */
    async snapshotCampaign(workspaceId: string, campaignId: string): Promise<SnapshotResult> {
      const outcome = await takeSnapshot(db, workspaceId, campaignId, new Date());
      return outcome.state === 'waiting' ? { state: 'waiting', scheduledAt: outcome.scheduledAt.toISOString() } : outcome;
    },

    /**
     * Feeds a sending campaign's messages to the outbox for one slice: whenever fewer than the window
     * wait unsent, the next page of recipients is written after the cursor; the campaign completes when
     * every message is written and none is left unsent. It reads the campaign each round, so a pause or
     * cancel (through the API, or its own auto-pause on bad bounce or complaint rates) ends the slice
     * within a poll. Heartbeats carry the cursor: a retried attempt (a worker died) goes on from the last
     * one it reported, and pages it writes again insert nothing twice.
     */
    async feedCampaign(input: FeedInput): Promise<FeedResult> {
      const { workspaceId, campaignId } = input;
      const context = Context.current();
      const reported = context.info.heartbeatDetails as { cursor?: number } | undefined;
      let cursor = Math.max(input.cursor, reported?.cursor ?? 0);
      const deadline = Date.now() + settings.sliceMs;
      for (;;) {
        context.heartbeat({ cursor });
        const state = await readFeedState(db, workspaceId, campaignId);
        if (!state) return { cursor, state: 'done', status: 'canceled' };
        if (state.status === 'paused') return { cursor, state: 'paused', status: state.status };
        if (state.status !== 'sending') return { cursor, state: 'done', status: state.status };
        const reason = state.autoPaused ? null : autoPauseReason(state, settings.autoPause);
        if (reason) {
          await pauseCampaign(db, workspaceId, campaignId, { reason, auto: true });
          continue;
        }
        const left = state.recipientCount - cursor;
        const size = Math.min(settings.page, left, settings.window - state.outstanding);
        // Whole pages only (or the last, shorter one): a row at a time as sends free the window would cost a statement each.
        if (left > 0 && size >= Math.min(settings.page, left)) {
          // With a local send time, only the recipients already due: the rest wait for their moment.
          const page = await acceptCampaignPage(db, workspaceId, campaignId, { after: cursor, upTo: cursor + size }, state);
          if (page.upTo > cursor) {
            if (page.sending) cursor = page.upTo;
            if (Date.now() < deadline) continue;
          } else if (page.nextAt && state.outstanding === 0) {
            // Nothing in flight and nothing due: a durable timer in the workflow waits better than a poll.
            return { cursor, state: 'waiting', status: state.status, nextAt: page.nextAt.toISOString() };
          }
        }
        if (left <= 0 && state.outstanding === 0 && (await completeCampaign(db, workspaceId, campaignId))) {
          return { cursor, state: 'done', status: 'sent' };
        }
        if (Date.now() >= deadline) return { cursor, state: 'more', status: state.status };
        await context.sleep(settings.pollMs);
      }
    },

    /** Takes a paused campaign's waiting messages out of the outbox; returns the cursor to go on from, or null. */
    async holdCampaignMessages(workspaceId: string, campaignId: string): Promise<number | null> {
      return holdWaitingMessages(db, workspaceId, campaignId);
    },
  };
}
