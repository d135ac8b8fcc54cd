import { formatMailbox } from '../../core/addresses';
import { campaignChannels } from '../../core/campaign-channels';
import { needsConfirmation } from '../../core/campaigns';
import { AppError } from '../../core/errors';
import { CHAT_LIMITS, type ChatChannelName, isChatChannel } from '../../core/message-channels';
import type { ChatContentInput, EmailContentInput } from '../../core/message-content';
import { PLANS, type PlanName, quotaAllows, quotaExceeded, usagePeriodAt } from '../../core/plans';
import { analyseInlineContent } from '../../core/templates/analyse';
import { htmlToPlainText } from '../../core/templates/plain-text';
import { estimateAudience, resolveAudience } from '../../db/repositories/campaign-audience';
import {
  beginSend,
  cancelCampaign,
  type FrozenMessage,
  pauseCampaign,
  resumeCampaign,
  revertToDraft,
} from '../../db/repositories/campaign-transitions';
import type { CampaignRecord } from '../../db/repositories/campaigns';
import { findTemplateByIdOrName, type TemplateRecord } from '../../db/repositories/templates';
import { hasIntegration, missingIntegration } from '../../services/acceptance/chat-acceptance';
import { usedInPeriod } from '../../db/repositories/usage';
import { authorizedSender } from '../../core/sender-authorization';
import { signalCampaign, startCampaignWorkflow } from '../../temporal/campaigns';
import { withDeadline } from '../../temporal/deadline';
import { type CampaignService, type CampaignServiceDeps, missingAudience } from './service';

/**
 * Sending, pausing, resuming and canceling a campaign. The campaign row is the truth: each request moves
 * it in the database first (the answer does not wait on Temporal), then tells the campaign's workflow.
 */

function confirmationError(code: 'confirmation_required' | 'confirmation_invalid', message: string): AppError {
  return new AppError(code, message);
}

/** Every field error of a draft that cannot be sent, gathered so one 422 names them all. */
type FieldErrors = Record<string, string[]>;

/** The email every email recipient gets: sender on a verified domain (403 otherwise), subject and content. */
async function emailContent(deps: CampaignServiceDeps, campaign: CampaignRecord, template: TemplateRecord | null, fieldErrors: FieldErrors) {
  if (!campaign.fromAddress) fieldErrors.fromAddress = ['Required to send'];
  if (campaign.html === null && campaign.text === null && !template) fieldErrors.html = ['Give html, text or templateId to send'];
  if (campaign.subject === null && !template?.subject?.trim()) fieldErrors.subject = ['Required to send unless the template supplies it'];
  if (Object.keys(fieldErrors).length) return null;
  const from = await authorizedSender(deps.verifiedDomain, campaign.workspaceId, campaign.fromAddress as string, 'fromAddress');
  const content: EmailContentInput = {
    replyTo: campaign.replyTo,
    attachments: campaign.attachments,
    disableTracking: campaign.disableTracking,
    disableUtm: campaign.disableUtm,
    // The decisions' utm_campaign for campaign mail: the campaign's name.
    utmCampaign: campaign.name,
  };
  if (template) content.templateVersionId = template.versionId;
  else Object.assign(content, { html: campaign.html ?? undefined, text: campaign.text ?? undefined });
  return { from: formatMailbox(from), content };
}

/**
 * What a chat channel's recipients get, checked as POST /messages checks a chat send (chat-acceptance.ts):
 * the integration saved, some content (text or html as plain text, the template, or on WhatsApp a content
 * template), the text within the channel's length, the files within its count. WhatsApp's 24-hour window
 * is each recipient's, decided at their turn (services/acceptance/campaign-page.ts).
 */
async function chatContent(
  deps: CampaignServiceDeps,
  campaign: CampaignRecord,
  channel: ChatChannelName,
  template: TemplateRecord | null,
  fieldErrors: FieldErrors,
): Promise<ChatContentInput | null> {
  if (!(await hasIntegration(deps.db, campaign.workspaceId, channel))) throw missingIntegration(channel, channel === campaign.channel ? 'channel' : 'fallbackChain');
  const contentSid = channel === 'whatsapp' ? campaign.contentSid : null;
  const text = campaign.text ?? (campaign.html !== null ? htmlToPlainText(campaign.html) : undefined);
  if (!text && !template && !contentSid) fieldErrors.text = [`Give text, html or templateId to send on ${channel}${channel === 'whatsapp' ? ' (or contentSid)' : ''}`];
  if (text && !template && !contentSid && text.length > CHAT_LIMITS[channel].textChars) fieldErrors.text = [`At most ${CHAT_LIMITS[channel].textChars} characters on ${channel}`];
  if (campaign.attachments.length > CHAT_LIMITS[channel].attachments) fieldErrors.attachments = [`At most ${CHAT_LIMITS[channel].attachments} on ${channel}`];
  if (fieldErrors.text || fieldErrors.attachments) return null;
  if (contentSid) return { contentSid, contentVariables: campaign.contentVariables ?? undefined, attachments: campaign.attachments };
  return template ? { templateVersionId: template.versionId, attachments: campaign.attachments } : { text, attachments: campaign.attachments };
}

/**
 * What every message of the campaign will carry on each of its channels; refuses a draft that cannot be
 * sent (422 naming the fields, 403 for a sender's domain, template_not_found). Email content only when
 * email is one of the campaign's channels: a chat-only campaign has no sender or subject.
 */
async function frozenMessage(deps: CampaignServiceDeps, campaign: CampaignRecord): Promise<FrozenMessage> {
  const template = campaign.templateId ? await findTemplateByIdOrName(deps.db, campaign.workspaceId, campaign.templateId) : null;
  if (campaign.templateId && !template) throw new AppError('template_not_found', 'The campaign\'s template was deleted');
  const fieldErrors: FieldErrors = {};
  // Each message renders its own subject, html and text with its contact (activities/email-render.ts,
  // chat-render.ts): a draft saved before that was checked is refused here rather than failing recipient
  // by recipient.
  analyseInlineContent(campaign);
  const channels = campaignChannels(campaign.channel, campaign.fallbackChain);
  const chat: Partial<Record<ChatChannelName, ChatContentInput>> = {};
  for (const channel of channels) {
    if (!isChatChannel(channel)) continue;
    const content = await chatContent(deps, campaign, channel, template, fieldErrors);
    if (content) chat[channel] = content;
  }
  const email = channels.includes('email') ? await emailContent(deps, campaign, template, fieldErrors) : null;
  if (Object.keys(fieldErrors).length) throw AppError.validation({ formErrors: [], fieldErrors });
  return { from: email?.from ?? null, subject: email ? campaign.subject : null, content: email?.content ?? {}, chat: Object.keys(chat).length ? chat : null };
}

function checkConfirmation(deps: CampaignServiceDeps, campaign: CampaignRecord, token: string | undefined, now: Date): void {
  if (!token) {
    throw confirmationError('confirmation_required', 'Sending now or within 5 minutes needs the confirmationToken of POST /campaigns/:id/estimate');
  }
  const claims = deps.tokens.read(token);
  if (!claims || claims.campaignId !== campaign.id) throw confirmationError('confirmation_invalid', 'The confirmationToken is not one of this campaign\'s');
  if (claims.revision !== campaign.revision) throw confirmationError('confirmation_invalid', 'The campaign was edited after this estimate: estimate again');
  if (claims.expiresAt <= now) throw confirmationError('confirmation_invalid', 'The confirmationToken expired (10 minutes): estimate again');
}

/** What sending works with: the campaign service's deps, the campaigns themselves, and the start deadline settled. */
export interface CampaignSendingDeps extends CampaignServiceDeps {
  campaigns: CampaignService;
  startTimeoutMs: number;
}

/** Signals are a nudge: the workflow finds the change itself at its next round if this one is lost. */
export async function nudge(sending: CampaignSendingDeps, campaignId: string, signal: 'pause' | 'resume' | 'cancel'): Promise<void> {
  try {
    await withDeadline(sending.temporal, sending.startTimeoutMs, () => signalCampaign(sending.temporal, campaignId, signal));
  } catch (err) {
    sending.logger.warn({ err, campaignId, signal }, 'campaign signal not delivered; the workflow will see the change on its next round');
  }
}

export async function conflict({ campaigns }: CampaignSendingDeps, workspaceId: string, campaignId: string, doing: string): Promise<never> {
  const campaign = await campaigns.get(workspaceId, campaignId);
  throw new AppError('conflict', `The campaign is ${campaign.status}: ${doing}`);
}

/**
 * Sends now or at `scheduledAt`. The decisions' rules: only a draft; now or within five minutes needs
 * a valid confirmation token (estimated at this revision, under ten minutes old); the whole audience
 * must fit the plan's quota now (402 before anything goes). Answers how many it would reach now.
 */
export async function sendCampaign(deps: CampaignSendingDeps, principal: { workspaceId: string; plan: PlanName }, campaignId: string, body: { confirmationToken?: string; scheduledAt?: string }, now: Date) {
  const { db, campaigns, startTimeoutMs } = deps;
  const { workspaceId } = principal;
  const campaign = await campaigns.get(workspaceId, campaignId);
  if (campaign.status !== 'draft') throw new AppError('conflict', `The campaign is ${campaign.status}: only a draft is sent`);
  const requested = body.scheduledAt ? new Date(body.scheduledAt) : null;
  const scheduledAt = requested && requested > now ? requested : null;
  if (needsConfirmation(scheduledAt, now)) checkConfirmation(deps, campaign, body.confirmationToken, now);
  const message = await frozenMessage(deps, campaign);
  const audience = await resolveAudience(db, workspaceId, campaign, now);
  if ('missing' in audience) throw missingAudience(audience.missing);
  // The holdout is never sent to, so it needs no quota.
  const { recipients } = await estimateAudience(
    deps.audienceDb ?? db, workspaceId, audience.rules, audience.context, { campaignId, percent: campaign.holdoutPercent },
    campaignChannels(campaign.channel, campaign.fallbackChain),
  );
  const plan = PLANS[principal.plan];
  const used = await usedInPeriod(db, workspaceId, usagePeriodAt(now));
  if (!quotaAllows(plan, used, recipients)) {
    throw quotaExceeded(plan, used, recipients, 'This campaign');
  }
  const begun = await beginSend(db, workspaceId, campaignId, { revision: campaign.revision, scheduledAt, message });
  if (!begun) {
    const current = await campaigns.get(workspaceId, campaignId);
    if (current.status !== 'draft') throw new AppError('conflict', `The campaign is ${current.status}: only a draft is sent`);
    throw confirmationError('confirmation_invalid', 'The campaign was edited while it was being sent: estimate again');
  }
  try {
    await withDeadline(deps.temporal, startTimeoutMs, () =>
      startCampaignWorkflow(deps.temporal, deps.taskQueuePrefix, { workspaceId, campaignId, scheduledAt }),
    );
  } catch (err) {
    deps.logger.warn({ err, campaignId }, 'campaign workflow not started; the campaign stays a draft');
    await revertToDraft(db, workspaceId, campaignId);
    throw new AppError('service_unavailable', 'Campaigns run on the background workers, which cannot be reached right now. Try again in a minute.');
  }
  return { id: campaignId, status: begun.status, scheduledAt: scheduledAt?.toISOString() ?? null, recipients };
}

export async function pauseSending(deps: CampaignSendingDeps, workspaceId: string, campaignId: string): Promise<CampaignRecord> {
  const paused = await pauseCampaign(deps.db, workspaceId, campaignId, { reason: null, auto: false });
  if (!paused) return conflict(deps, workspaceId, campaignId, 'only a sending campaign pauses');
  await nudge(deps, campaignId, 'pause');
  return paused;
}

export async function resumeSending(deps: CampaignSendingDeps, workspaceId: string, campaignId: string): Promise<CampaignRecord> {
  const resumed = await resumeCampaign(deps.db, workspaceId, campaignId);
  if (!resumed) return conflict(deps, workspaceId, campaignId, 'only a paused campaign resumes');
  await nudge(deps, campaignId, 'resume');
  return resumed;
}

/** A scheduled campaign sends nothing; a sending or paused one stops, its unsent messages `canceled`. */
export async function cancelSending(deps: CampaignSendingDeps, workspaceId: string, campaignId: string): Promise<CampaignRecord> {
  const canceled = await cancelCampaign(deps.db, workspaceId, campaignId);
  if (!canceled) return conflict(deps, workspaceId, campaignId, 'only a scheduled, sending or paused campaign is canceled');
  await nudge(deps, campaignId, 'cancel');
  return canceled;
}

export function createCampaignSending(deps: CampaignServiceDeps, campaigns: CampaignService) {
  const sending: CampaignSendingDeps = { ...deps, campaigns, startTimeoutMs: deps.startTimeoutMs ?? 3_000 };
  return {
    send: (principal: { workspaceId: string; plan: PlanName }, campaignId: string, body: { confirmationToken?: string; scheduledAt?: string }, now: Date) =>
      sendCampaign(sending, principal, campaignId, body, now),
    pause: (workspaceId: string, campaignId: string) => pauseSending(sending, workspaceId, campaignId),
    resume: (workspaceId: string, campaignId: string) => resumeSending(sending, workspaceId, campaignId),
    cancel: (workspaceId: string, campaignId: string) => cancelSending(sending, workspaceId, campaignId),
  };
}

export type CampaignSending = ReturnType<typeof createCampaignSending>;
