import type { z } from 'zod';
import { type CampaignCounters, metricsSummary, progressOf } from '../../core/campaign-metrics';
import type { CampaignRecord } from '../../db/repositories/campaigns';
import type { CampaignDetailSchema, CampaignSchema } from './schemas';

const iso = (date: Date | null) => (date ? date.toISOString() : null);

/** Metrics exist once the campaign has messages (the spec: null for campaigns without). */
function metricsOf(campaign: CampaignRecord, counters: CampaignCounters | undefined) {
  if (!counters || campaign.materialized === 0) return null;
  return metricsSummary(campaign.recipientCount ?? 0, counters);
}

export function campaignView(campaign: CampaignRecord, counters?: CampaignCounters): z.infer<typeof CampaignSchema> {
  return {
    id: campaign.id,
    name: campaign.name,
    status: campaign.status,
    listId: campaign.listId,
    segmentId: campaign.segmentId,
    scheduledAt: iso(campaign.scheduledAt),
    completedAt: iso(campaign.completedAt),
    recipientCount: campaign.recipientCount ?? 0,
    holdoutPercent: campaign.holdoutPercent,
    channel: campaign.channel,
    createdAt: campaign.createdAt.toISOString(),
    ...(counters && { metrics: metricsOf(campaign, counters) }),
  };
}

type Skipped = z.infer<typeof CampaignDetailSchema>['skipped'];

export function campaignDetailView(campaign: CampaignRecord, counters: CampaignCounters, skipped: Skipped, now: Date): z.infer<typeof CampaignDetailSchema> {
  const progress =
    campaign.recipientCount === null
      ? null
      : progressOf(
          { recipients: campaign.recipientCount, canceled: campaign.canceledCount, startedAt: campaign.startedAt, sending: campaign.status === 'sending' },
          counters,
          now,
        );
  return {
    ...campaignView(campaign, counters),
    fromAddress: campaign.fromAddress,
    subject: campaign.subject,
    html: campaign.html,
    text: campaign.text,
    templateId: campaign.templateId,
    replyTo: campaign.replyTo,
    attachments: campaign.attachments.map(({ id, filename, contentType, size }) => ({ id, filename, contentType, size })),
    disableTracking: campaign.disableTracking,
    disableUtm: campaign.disableUtm,
    sendAtLocalTime: campaign.sendAtLocalTime,
    fallbackChain: campaign.fallbackChain,
    contentSid: campaign.contentSid,
    contentVariables: campaign.contentVariables,
    skipped,
    pausedReason: campaign.pausedReason,
    failureReason: campaign.failureReason,
    startedAt: iso(campaign.startedAt),
    updatedAt: campaign.updatedAt.toISOString(),
    progress: progress && { ...progress, expectedEndAt: iso(progress.expectedEndAt) },
  };
}
