import type { Sequelize } from 'sequelize';
import { dueRecipients, skipOutsideWindow, writePage } from '../../db/repositories/campaign-feed';
import { countAccepted } from './metrics';

/** What one page of a campaign's acceptance did: the cursor to go on from, and when the next recipient is due. */
export interface CampaignPage {
  /** The last recipient position written (the range's start when none was due). */
  upTo: number;
  /** False when the campaign left `sending` (paused, canceled) before the page was written: nothing was. */
  sending: boolean;
  /** With a local send time: the moment the next recipient of the range is due, when none is yet. */
  nextAt: Date | null;
}

/**
 * The acceptance of a campaign's messages, a page at a time: the snapshot's recipients after the cursor become
 * queued messages in one set-based statement (db/repositories/campaign-feed.ts `writePage`), guarded by the
 * campaign's status. It differs from a transactional send's acceptance (write.ts) on purpose: the audience's
 * quota was reserved and its suppressed recipients left out once, at the snapshot; ids derive from campaign
 * and contact, so a page written again (a retried activity) inserts nothing twice; there is no caller's
 * idempotency key to answer. With a local send time only the recipients already due are written.
 * WhatsApp's 24-hour window is decided here, at each recipient's turn, as POST /messages decides it at
 * acceptance: free-form content to a customer outside it is skipped with its reason (skipOutsideWindow),
 * a content template goes at any time. The messages then take the outbox's path like any other: the same
 * dispatcher, pacing per provider and delivery as POST /messages' (docs/campaigns.md "Chat channels").
 */
export async function acceptCampaignPage(
  db: Sequelize,
  workspaceId: string,
  campaignId: string,
  range: { after: number; upTo: number },
  options: { localTime: boolean; whatsappWindow: boolean },
): Promise<CampaignPage> {
  const due = options.localTime ? await dueRecipients(db, campaignId, range) : { upTo: range.upTo, nextAt: null };
  if (due.upTo <= range.after) return { upTo: range.after, sending: true, nextAt: due.nextAt };
  if (options.whatsappWindow) await skipOutsideWindow(db, workspaceId, campaignId, { after: range.after, upTo: due.upTo });
  const page = await writePage(db, workspaceId, campaignId, { after: range.after, upTo: due.upTo });
  // Only the rows this page inserted: a page written again (a retried activity) inserts, and counts, nothing.
  for (const [channel, count] of Object.entries(page.writtenByChannel)) countAccepted(channel, 'campaign', count);
  return { upTo: due.upTo, sending: page.sending, nextAt: due.nextAt };
}
