import { type LinkClicks, linkStats } from '../../db/repositories/link-stats';
import type { Client } from '@temporalio/client';
import type { Logger } from 'pino';
import type { Sequelize } from 'sequelize';
import { formatMailbox, parseMailboxes } from '../../core/addresses';
import type { CampaignCounters } from '../../core/campaign-metrics';
import { CAMPAIGN_SKIP_REASONS, campaignChannels } from '../../core/campaign-channels';
import { CONFIRMATION_TTL_MS } from '../../core/campaigns';
import type { ConfirmationTokens } from '../../core/confirmation-token';
import { AppError } from '../../core/errors';
import { analyseInlineContent } from '../../core/templates/analyse';
import type { Channel } from '../../core/identities';
import { isChatChannel } from '../../core/message-channels';
import { estimateAudience, resolveAudience } from '../../db/repositories/campaign-audience';
import { campaignCounters } from '../../db/repositories/campaign-counters';
import { skippedRecipients } from '../../db/repositories/campaign-feed';
import {
  type CampaignDraft,
  type CampaignRecord,
  CampaignTemplateGone,
  deleteDraft,
  findCampaign,
  insertCampaign,
  listCampaigns,
  updateDraft,
} from '../../db/repositories/campaigns';
import { findList } from '../../db/repositories/lists';
import { findSegment } from '../../db/repositories/segments';
import { findTemplateByIdOrName } from '../../db/repositories/templates';
import { hasIntegration, missingIntegration } from '../../services/acceptance/chat-acceptance';
import type { AttachmentSources } from '../../services/attachment-sources';
import type { CreateCampaignInput, UpdateCampaignInput } from './schemas';

export interface CampaignServiceDeps {
  db: Sequelize;
  /** The pool of audience queries (db/audience-session.ts), where estimates run; `db` unless given. */
  audienceDb?: Sequelize;
  temporal: Client;
  taskQueuePrefix: string;
  tokens: ConfirmationTokens;
  sources: Pick<AttachmentSources, 'accept'>;
  /** The sending domain if it is verified for the workspace, with its default display name. */
  verifiedDomain: (workspaceId: string, domain: string) => Promise<{ defaultFromName: string | null } | null>;
  logger: Logger;
  /** How long a workflow start may take before the send gives up on Temporal. */
  startTimeoutMs?: number;
}

export const fieldError = (field: string, message: string): AppError => AppError.validation({ formErrors: [], fieldErrors: { [field]: [message] } });

/** A draft's fields as given, checked against the workspace: its list or segment, sender, reply-to, template and files. */
async function draftChange(deps: CampaignServiceDeps, workspaceId: string, input: UpdateCampaignInput): Promise<Partial<CampaignDraft>> {
  const { db } = deps;
  const change: Partial<CampaignDraft> = {};
  if (input.name !== undefined) change.name = input.name;
  if (input.listId) {
    if (!(await findList(db, workspaceId, input.listId))) throw fieldError('listId', 'No list with this id in the workspace');
    Object.assign(change, { listId: input.listId, segmentId: null });
  } else if (input.listId === null) change.listId = null;
  if (input.segmentId) {
    if (!(await findSegment(db, workspaceId, input.segmentId))) throw fieldError('segmentId', 'No segment with this id in the workspace');
    Object.assign(change, { segmentId: input.segmentId, listId: null });
  } else if (input.segmentId === null) change.segmentId = null;
  if (input.fromAddress !== undefined) {
    const parsed = input.fromAddress === null ? null : parseMailboxes(input.fromAddress);
    if (parsed && (!parsed.ok || parsed.mailboxes.length !== 1)) throw fieldError('fromAddress', parsed.ok ? 'Give exactly one sender' : parsed.error);
    change.fromAddress = parsed?.ok ? formatMailbox(parsed.mailboxes[0]) : null;
  }
  if (input.replyTo !== undefined) {
    const parsed = input.replyTo === null ? null : parseMailboxes(input.replyTo);
    if (parsed && !parsed.ok) throw fieldError('replyTo', parsed.error);
    change.replyTo = parsed?.ok ? parsed.mailboxes.map(formatMailbox) : [];
  }
  if (input.templateId !== undefined) {
    const template = input.templateId === null ? null : await findTemplateByIdOrName(db, workspaceId, input.templateId);
    if (input.templateId !== null && !template) throw new AppError('template_not_found', `No template ${input.templateId}`);
    change.templateId = template?.id ?? null;
  }
  // The campaign's own content renders with each contact as a template does: its Liquid is checked now (422 naming the field).
  analyseInlineContent(input);
  for (const key of ['subject', 'html', 'text', 'disableTracking', 'disableUtm', 'sendAtLocalTime', 'holdoutPercent', 'channel', 'fallbackChain', 'contentSid', 'contentVariables'] as const) {
    if (input[key] !== undefined) Object.assign(change, { [key]: input[key] });
  }
  // Stored last, so a draft refused for another reason stores no file.
  if (input.attachments !== undefined) change.attachments = (await deps.sources.accept(workspaceId, input.attachments)).refs;
  return change;
}

/**
 * The channels of a draft as they would be after the change: each chat channel needs the workspace's
 * integration now (a 422 naming the field that chose it: `channel`, or `fallbackChain`), as a send on it
 * would (checked again at send: an integration may be deleted meanwhile). A channel named twice in the
 * chain is refused; `contentSid` is only for a campaign that has WhatsApp among its channels.
 */
export async function checkChannels(
  db: Sequelize,
  workspaceId: string,
  draft: { channel: Channel; fallbackChain: Channel[]; contentSid: string | null },
): Promise<void> {
  const channels = campaignChannels(draft.channel, draft.fallbackChain);
  if (channels.length !== draft.fallbackChain.length + 1) throw fieldError('fallbackChain', 'Each channel once (channel counts)');
  for (const [index, channel] of channels.entries()) {
    if (isChatChannel(channel) && !(await hasIntegration(db, workspaceId, channel))) throw missingIntegration(channel, index === 0 ? 'channel' : 'fallbackChain');
  }
  if (draft.contentSid && !channels.includes('whatsapp')) throw fieldError('contentSid', 'Only for a campaign with whatsapp among its channels');
}

const templateGone = () => new AppError('template_not_found', 'The template was deleted');

export async function getCampaign({ db }: CampaignServiceDeps, workspaceId: string, campaignId: string): Promise<CampaignRecord> {
  const campaign = await findCampaign(db, workspaceId, campaignId);
  if (!campaign) throw AppError.notFound('Campaign');
  return campaign;
}

export async function countersOfCampaign({ db }: CampaignServiceDeps, workspaceId: string, campaignId: string): Promise<CampaignCounters> {
  return (await campaignCounters(db, workspaceId, [campaignId])).get(campaignId) as CampaignCounters;
}

/** Per-link statistics of the campaign's messages (the same query as GET /emails/links, scoped to it). */
export async function campaignLinks(deps: CampaignServiceDeps, workspaceId: string, campaignId: string): Promise<LinkClicks[]> {
  await getCampaign(deps, workspaceId, campaignId);
  return linkStats(deps.db, workspaceId, { campaignId });
}

export async function campaignPage({ db }: CampaignServiceDeps, workspaceId: string, page: { limit: number; offset: number; metrics: boolean }) {
  const { rows, total } = await listCampaigns(db, workspaceId, page);
  const counters = page.metrics ? await campaignCounters(db, workspaceId, rows.map((campaign) => campaign.id)) : null;
  return { rows: rows.map((campaign) => ({ campaign, counters: counters?.get(campaign.id) })), total };
}

export async function createCampaign(deps: CampaignServiceDeps, workspaceId: string, input: CreateCampaignInput): Promise<CampaignRecord> {
  const change = await draftChange(deps, workspaceId, input);
  const draft: CampaignDraft = {
    name: input.name,
    listId: null,
    segmentId: null,
    fromAddress: null,
    subject: null,
    html: null,
    text: null,
    templateId: null,
    replyTo: [],
    attachments: [],
    disableTracking: false,
    disableUtm: false,
    sendAtLocalTime: null,
    holdoutPercent: 0,
    channel: 'email',
    fallbackChain: [],
    contentSid: null,
    contentVariables: null,
    ...change,
  };
  await checkChannels(deps.db, workspaceId, draft);
  try {
    return await insertCampaign(deps.db, workspaceId, draft);
  } catch (error) {
    if (error instanceof CampaignTemplateGone) throw templateGone();
    throw error;
  }
}

/**
 * Only a draft changes (409 otherwise, holdoutPercent included: the groups are fixed once it starts); every
 * change voids the confirmation tokens of its estimates.
 */
export async function updateCampaign(deps: CampaignServiceDeps, workspaceId: string, campaignId: string, input: UpdateCampaignInput): Promise<CampaignRecord> {
  const current = await getCampaign(deps, workspaceId, campaignId);
  const change = await draftChange(deps, workspaceId, input);
  if (current.status === 'draft' && (change.channel !== undefined || change.fallbackChain !== undefined || change.contentSid !== undefined)) {
    await checkChannels(deps.db, workspaceId, { ...current, ...change });
  }
  let outcome;
  try {
    outcome = await updateDraft(deps.db, workspaceId, campaignId, change);
  } catch (error) {
    if (error instanceof CampaignTemplateGone) throw templateGone();
    throw error;
  }
  if (outcome.state === 'not-found') throw AppError.notFound('Campaign');
  if (outcome.state === 'not-draft') throw new AppError('conflict', `The campaign is ${outcome.status}: only a draft can be edited`);
  return outcome.campaign;
}

/**
 * Who the campaign would reach now (422 naming the field when a chat channel of it has no integration), and a confirmation token for the campaign at this revision (valid
 * ten minutes): what an immediate send must present.
 */
export async function estimateCampaign(deps: CampaignServiceDeps, workspaceId: string, campaignId: string, now: Date) {
  const { db } = deps;
  const campaign = await getCampaign(deps, workspaceId, campaignId);
  // No token for a campaign that could not go: an integration deleted since the draft was saved.
  await checkChannels(db, workspaceId, campaign);
  const audience = await resolveAudience(db, workspaceId, campaign, now);
  if ('missing' in audience) throw missingAudience(audience.missing);
  const estimate = await estimateAudience(
    deps.audienceDb ?? db, workspaceId, audience.rules, audience.context, { campaignId, percent: campaign.holdoutPercent },
    campaignChannels(campaign.channel, campaign.fallbackChain),
  );
  return {
    estimate: {
      listMembers: estimate.members,
      recipients: estimate.recipients,
      heldOut: estimate.heldOut,
      excluded: estimate.members - estimate.recipients - estimate.heldOut,
      byChannel: estimate.byChannel,
      noAddress: estimate.noAddress,
      sample: estimate.sample,
    },
    confirmationToken: deps.tokens.sign({ campaignId, revision: campaign.revision, expiresAt: new Date(now.getTime() + CONFIRMATION_TTL_MS) }),
  };
}

/** Members who got no message, by reason: none reached at the start, and those skipped at their turn. */
export async function skippedOfCampaign({ db }: CampaignServiceDeps, campaign: CampaignRecord) {
  const atTurn = campaign.recipientCount === null ? {} : await skippedRecipients(db, campaign.workspaceId, campaign.id);
  return { noReachableIdentity: campaign.unreachableCount, outsideWhatsAppWindow: atTurn[CAMPAIGN_SKIP_REASONS.whatsappWindow] ?? 0 };
}

/** DELETE of a draft; anything sent or scheduled is 409: its messages and metrics name it (cancel stops it). */
export async function deleteCampaign({ db }: CampaignServiceDeps, workspaceId: string, campaignId: string): Promise<void> {
  const outcome = await deleteDraft(db, workspaceId, campaignId);
  if (outcome.state === 'not-found') throw AppError.notFound('Campaign');
  if (outcome.state === 'not-draft') throw new AppError('conflict', `The campaign is ${outcome.status}: only a draft is deleted`);
}

export function createCampaignService(deps: CampaignServiceDeps) {
  return {
    get: (workspaceId: string, campaignId: string) => getCampaign(deps, workspaceId, campaignId),
    countersOf: (workspaceId: string, campaignId: string) => countersOfCampaign(deps, workspaceId, campaignId),
    links: (workspaceId: string, campaignId: string) => campaignLinks(deps, workspaceId, campaignId),
    list: (workspaceId: string, page: { limit: number; offset: number; metrics: boolean }) => campaignPage(deps, workspaceId, page),
    create: (workspaceId: string, input: CreateCampaignInput) => createCampaign(deps, workspaceId, input),
    update: (workspaceId: string, campaignId: string, input: UpdateCampaignInput) => updateCampaign(deps, workspaceId, campaignId, input),
    estimate: (workspaceId: string, campaignId: string, now: Date) => estimateCampaign(deps, workspaceId, campaignId, now),
    skipped: (campaign: CampaignRecord) => skippedOfCampaign(deps, campaign),
    remove: (workspaceId: string, campaignId: string) => deleteCampaign(deps, workspaceId, campaignId),
  };
}

/** The 422 of a campaign whose audience is not set, or was deleted. */
export function missingAudience(missing: 'audience' | 'list' | 'segment'): AppError {
  if (missing === 'list') return fieldError('listId', 'The list was deleted');
  if (missing === 'segment') return fieldError('segmentId', 'The segment was deleted');
  return fieldError('listId', 'Give listId or segmentId: the campaign has no audience');
}

export type CampaignService = ReturnType<typeof createCampaignService>;
