import type { Sequelize } from 'sequelize';
import { formatMailbox } from '../../core/addresses';
import type { Channel } from '../../core/identities';
import { contactTimeZone, type DeferReason, nextAllowedMoment } from '../../core/journeys/delivery-window';
import { type MessageNode, nodeById } from '../../core/journeys/graph';
import { CHAT_LIMITS, isChatChannel, marketingIdentity } from '../../core/message-channels';
import type { FallbackStep } from '../../core/message-content';
import { nameBasedUuid } from '../../core/name-based-uuid';
import { renderLiquid } from '../../core/templates/liquid';
import { identitiesOf } from '../../db/repositories/contact-identities';
import {
  currentTemplateVersions,
  defaultSender,
  findJourneyContact,
  findJourneyMessage,
  readyAttachmentRefs,
  recentMarketingSends,
  writeJourneyMessage,
} from '../../db/repositories/journey-messages';
import { automationOf, loadEnrollment } from '../../db/repositories/journey-progress';
import { readJourneySettings } from '../../db/repositories/journey-settings';
import { findSuppressed } from '../../db/repositories/suppressions';
import { insideServiceWindow } from '../../db/repositories/whatsapp';
import { countAccepted, countRefused } from './metrics';

/** What became of a journey's message node when the workflow asked (docs/journeys.md). */
export type JourneyMessageOutcome =
  | { state: 'queued'; messageId: string; channel: Channel }
  | { state: 'skipped'; reason: JourneySkipReason }
  | { state: 'deferred'; until: string; reason: DeferReason }
  | { state: 'held' };

export type JourneySkipReason =
  | 'no_reachable_identity'
  | 'suppressed'
  | 'no_sender'
  | 'outside_whatsapp_window'
  | 'quota_exceeded'
  | 'not_active'
  | 'not_a_message';

/** The id of the one message a node sends an enrollment's contact. */
export function journeyMessageId(enrollmentId: string, nodeId: string): string {
  return nameBasedUuid('journey-message', enrollmentId, nodeId);
}

interface Reachable {
  channel: Channel;
  to: string;
  fromAddress: string | null;
  templateId: string;
  templateVersionId: string;
  /** WhatsApp outside the contact's 24-hour window: the node's content template instead of the template's text. */
  contentTemplate?: { contentSid: string; contentVariables: Record<string, string> };
}

/**
 * The channels the message can go out on, in the node's order (preferred, then the fallback chain): each
 * needs a reachable identity (core/message-channels.ts `marketingIdentity`) that is not suppressed, a live template, and
 * for email a sender. WhatsApp takes free-form text only within 24 hours of the contact's last message
 * (decided by the workflow's clock, as POST /messages decides it for its sends): outside that window the
 * node's content template goes instead, and without one WhatsApp is passed over. The first that qualifies
 * carries the message; the others become its fallback steps.
 */
async function reachableChannels(
  db: Sequelize,
  workspaceId: string,
  contactId: string,
  node: MessageNode,
  now: Date,
): Promise<{ reachable: Reachable[]; missed: JourneySkipReason }> {
  const order = [...new Set<Channel>([node.preferredChannel, ...node.fallbackChain])];
  const identities = await identitiesOf(db, workspaceId, [contactId]);
  const versions = await currentTemplateVersions(db, workspaceId, Object.values(node.templateByChannel).filter((id): id is string => id !== undefined));
  const reachable: Reachable[] = [];
  let missed: JourneySkipReason = 'no_reachable_identity';
  for (const channel of order) {
    const identity = marketingIdentity(identities, channel);
    const templateId = node.templateByChannel[channel];
    const templateVersionId = templateId ? versions.get(templateId) : undefined;
    if (!identity || !templateId || !templateVersionId) continue;
    if ((await findSuppressed(db, workspaceId, channel, [identity.address])).size > 0) {
      missed = 'suppressed';
      continue;
    }
    let fromAddress: string | null = null;
    if (channel === 'email') {
      const sender = node.from ?? (await defaultSenderText(db, workspaceId));
      if (!sender) {
        missed = 'no_sender';
        continue;
      }
      fromAddress = sender;
    }
    let contentTemplate: Reachable['contentTemplate'];
    if (channel === 'whatsapp' && !(await insideServiceWindow(db, workspaceId, identity.address, now))) {
      if (!node.contentSid) {
        missed = 'outside_whatsapp_window';
        continue;
      }
      contentTemplate = { contentSid: node.contentSid, contentVariables: node.contentVariables ?? {} };
    }
    reachable.push({ channel, to: identity.address, fromAddress, templateId, templateVersionId, ...(contentTemplate && { contentTemplate }) });
  }
  return { reachable, missed };
}

/**
 * A content template's variables with the contact's values: each is Liquid over the same variables the
 * journey's templates get (`{{ contact.firstName }}`), checked when the graph was saved; one that still
 * cannot render goes as written rather than stopping the journey.
 */
function renderedContentVariables(values: Record<string, string>, variables: Record<string, unknown>): Record<string, string> {
  return Object.fromEntries(Object.entries(values).map(([key, value]) => {
    try {
      return [key, renderLiquid(value, variables, 'text', `contentVariables.${key}`)];
    } catch {
      return [key, value];
    }
  }));
}

async function defaultSenderText(db: Sequelize, workspaceId: string): Promise<string | null> {
  const sender = await defaultSender(db, workspaceId);
  return sender ? formatMailbox({ address: sender.address, name: sender.name }) : null;
}

/**
 * Queues the message of a journey's message node, or says why not now (quiet hours, a frequency cap: the
 * moment it may go; a paused automation: held) or not at all (skipped). `nowIso` is the workflow's clock:
 * windows are decided by it, so time-skipping tests and replays agree with the workflow. A retry finds
 * the message its first attempt wrote and answers the same.
 */
export async function enqueueJourneyMessage(db: Sequelize, workspaceId: string, enrollmentId: string, nodeId: string, nowIso: string): Promise<JourneyMessageOutcome> {
  const now = new Date(nowIso);
  const messageId = journeyMessageId(enrollmentId, nodeId);
  const existing = await findJourneyMessage(db, workspaceId, messageId);
  if (existing) return { state: 'queued', messageId, channel: existing.channel };
  const journey = await loadEnrollment(db, workspaceId, enrollmentId);
  if (!journey || journey.status !== 'active') return { state: 'skipped', reason: 'not_active' };
  const automation = await automationOf(db, workspaceId, journey.automationId);
  if (!automation || automation.status === 'archived') return { state: 'skipped', reason: 'not_active' };
  if (automation.status === 'paused') return { state: 'held' };
  const node = nodeById(journey.graph, nodeId);
  if (node.type !== 'message') return { state: 'skipped', reason: 'not_a_message' };
  const contact = await findJourneyContact(db, workspaceId, journey.contactId);
  if (!contact) return { state: 'skipped', reason: 'not_active' };

  const { reachable, missed } = await reachableChannels(db, workspaceId, journey.contactId, node, now);
  const [first, ...rest] = reachable;
  if (!first) return { state: 'skipped', reason: missed };

  const settings = await readJourneySettings(db, workspaceId);
  const longestWindow = Math.max(0, ...settings.frequencyCaps.map((cap) => cap.windowMs));
  const recent = longestWindow > 0 ? await recentMarketingSends(db, workspaceId, journey.contactId, new Date(now.getTime() - longestWindow)) : [];
  const held = nextAllowedMoment(now, first.channel, settings, contactTimeZone(settings, contact.attributes), recent);
  if (held) return { state: 'deferred', until: held.at.toISOString(), reason: held.reason };

  const variables = { contact: { ...contact.attributes, id: journey.contactId, email: contact.email } };
  const attachments = await readyAttachmentRefs(db, workspaceId, node.attachmentIds);
  const contentOf = (step: Reachable) => ({
    // A content template has no text of ours (Twilio renders it), so no template version is pinned for it.
    ...(step.contentTemplate
      ? { contentSid: step.contentTemplate.contentSid, contentVariables: renderedContentVariables(step.contentTemplate.contentVariables, variables) }
      : { templateVersionId: step.templateVersionId }),
    variables,
    ...(step.channel === 'email' ? { replyTo: [], utmCampaign: automation.name } : {}),
  });
  const fallback: FallbackStep[] = rest.map((step) => ({
    channel: step.channel,
    to: [step.to],
    fromAddress: step.fromAddress,
    subject: null,
    templateId: step.templateId,
    content: contentOf(step),
  }));
  const written = await writeJourneyMessage(db, workspaceId, {
    id: messageId,
    enrollmentId,
    automationId: journey.automationId,
    nodeId,
    contactId: journey.contactId,
    channel: first.channel,
    to: first.to,
    fromAddress: first.fromAddress,
    templateId: first.templateId,
    content: {
      ...contentOf(first),
      attachments: isChatChannel(first.channel) ? attachments.slice(0, CHAT_LIMITS[first.channel].attachments) : attachments,
      fallback,
    },
    createdAt: now,
  });
  if (written === 'quota_exceeded') {
    countRefused(first.channel, 'journey', 'quota_exceeded');
    return { state: 'skipped', reason: 'quota_exceeded' };
  }
  // Counted only when written: a retried activity finds the message above and answers without counting it twice.
  countAccepted(first.channel, 'journey', 1);
  return { state: 'queued', messageId, channel: first.channel };
}
