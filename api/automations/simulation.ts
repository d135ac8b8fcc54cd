import type { Sequelize } from 'sequelize';
import { z } from 'zod';
import type { AudienceRules, Rule } from '../../core/audience-rules';
import { fieldsByKey } from '../../core/custom-fields';
import { AppError, isAppError } from '../../core/errors';
import { type Channel, CHANNELS, normaliseAddress } from '../../core/identities';
import { contactTimeZone, type RecentSend } from '../../core/journeys/delivery-window';
import { type BranchNode, type EventMatch, type JourneyGraph, nodeById, nodeLabelOf } from '../../core/journeys/graph';
import { EventMatchSchema, GraphSchema } from '../../core/journeys/graph-schema';
import { matchSynthetic } from '../../core/journeys/simulated-audience';
import { type PlannedMessage, type SimulatedEvent, simulateJourney } from '../../core/journeys/simulation';
import { checkedGraph } from '../../core/journeys/validation';
import { marketingIdentity } from '../../core/message-channels';
import { htmlToPlainText } from '../../core/templates/plain-text';
import { findAutomation, findAutomationVersion } from '../../db/repositories/automations';
import { recentMarketingSends } from '../../db/repositories/journey-messages';
import { contactMatchesRules } from '../../db/repositories/segments';
import { readJourneySettings } from '../../db/repositories/journey-settings';
import { identitiesOf } from '../../db/repositories/contact-identities';
import { findContact } from '../../db/repositories/contacts';
import { listCustomFields } from '../../db/repositories/custom-fields';
import { findTemplate } from '../../db/repositories/templates';
import type { TemplateRenderer } from '../../infra/template-renderer';
import type { SimulateInput, SimulationResult } from './simulation-schemas';

export interface AutomationSimulationDeps {
  db: Sequelize;
  /** The pool of audience queries (db/audience-session.ts), where branch rules are evaluated; `db` unless given. */
  audienceDb?: Sequelize;
  templateRenderer: TemplateRenderer;
  /** The moment "now" (default startAt, and what branch rules of a stored contact are evaluated at). */
  now?: () => Date;
}

/** The draft as POST /automations stores it: its graph in the input shape, checked again here. */
const StoredDraft = z.looseObject({ goal: EventMatchSchema.nullable().optional(), graph: GraphSchema });

interface Subject {
  contactId: string | null;
  attributes: Record<string, unknown>;
  /** The address of each channel that reaches the contact. */
  reach: Map<Channel, string>;
  email: string | null;
}

function hasRule(rules: Rule, types: ReadonlyArray<Rule['type']>): boolean {
  return types.includes(rules.type) || (rules.type === 'group' && rules.rules.some((rule) => hasRule(rule, types)));
}

/**
 * POST /automations/:id/simulate (docs/journeys.md): the journey run for one contact under a fake clock,
 * by core/journeys/simulation.ts, and the messages it would send rendered as the send path renders them
 * (tracking off). Nothing is sent or written.
 */
const nowOf = (deps: AutomationSimulationDeps) => (deps.now ? deps.now() : new Date());

export async function versionOf(db: Sequelize, workspaceId: string, automationId: string, wanted: SimulateInput['version']) {
  const automation = await findAutomation(db, workspaceId, automationId);
  if (!automation) throw AppError.notFound('Automation');
  const current = automation.currentVersionId ? await findAutomationVersion(db, workspaceId, automation.currentVersionId) : null;
  const source = wanted ?? (current ? 'current' : 'draft');
  if (source === 'current') {
    if (!current) {
      throw AppError.validation({ formErrors: [], fieldErrors: { version: ['The automation has no published version: activate it, or simulate the draft'] } });
    }
    const { id, version, goal, graph } = current;
    return { versionId: id, version, goal, graph };
  }
  const draft = StoredDraft.safeParse(automation.draft);
  if (!draft.success) throw AppError.validation({ formErrors: ['The draft is not a journey graph that can run'], fieldErrors: {} });
  const graph: JourneyGraph = checkedGraph(draft.data.graph);
  const goal: EventMatch | null = draft.data.goal ?? null;
  return { versionId: automation.draftVersionId, version: null, goal, graph };
}

export async function subjectOf(db: Sequelize, workspaceId: string, body: SimulateInput): Promise<Subject> {
  if (body.contactId !== undefined) {
    const contact = await findContact(db, workspaceId, body.contactId);
    if (!contact) throw AppError.notFound('Contact');
    const identities = await identitiesOf(db, workspaceId, [contact.id]);
    const reach = new Map<Channel, string>();
    for (const channel of CHANNELS) {
      const identity = marketingIdentity(identities, channel);
      if (identity) reach.set(channel, identity.address);
    }
    const email = identities.find((identity) => identity.channel === 'email' && identity.isPrimary)?.address ?? null;
    return { contactId: contact.id, attributes: contact.attributes, reach, email };
  }
  const given = body.contact ?? {};
  const reach = new Map<Channel, string>();
  const fieldErrors: Record<string, string[]> = {};
  const addresses: Array<[Channel, string | undefined, string]> = [
    ['email', given.email, 'contact.email'],
    ['whatsapp', given.phone, 'contact.phone'],
    ['telegram', given.telegramChatId, 'contact.telegramChatId'],
  ];
  for (const [channel, address, field] of addresses) {
    if (address === undefined) continue;
    const normalised = normaliseAddress(channel, address);
    if (normalised.ok) reach.set(channel, normalised.address);
    else fieldErrors[field] = [normalised.reason];
  }
  if (Object.keys(fieldErrors).length > 0) throw AppError.validation({ formErrors: [], fieldErrors });
  return { contactId: null, attributes: given.attributes ?? {}, reach, email: reach.get('email') ?? null };
}

/** Each branch rule of the graph for a stored contact, evaluated once in SQL as of now. */
export async function storedBranches(deps: AutomationSimulationDeps, workspaceId: string, contactId: string, graph: JourneyGraph): Promise<Map<string, boolean>> {
  const { db } = deps;
  const branches = graph.nodes.filter((node): node is BranchNode => node.type === 'branch');
  const results = new Map<string, boolean>();
  if (branches.length === 0) return results;
  const context = { fields: fieldsByKey(await listCustomFields(db, workspaceId)), now: nowOf(deps) };
  for (const node of branches) results.set(node.id, await contactMatchesRules(deps.audienceDb ?? db, workspaceId, contactId, node.condition, context));
  return results;
}

export async function renderPlanned(
  { db, templateRenderer }: AutomationSimulationDeps,
  workspaceId: string,
  planned: PlannedMessage,
  variables: Record<string, unknown>,
  notes: string[],
) {
  const base = { nodeId: planned.nodeId, channel: planned.channel, to: planned.to, at: planned.at.toISOString(), ...(planned.deferred && {
    deferred: { from: planned.deferred.from.toISOString(), reason: planned.deferred.reason },
  }) };
  const template = await findTemplate(db, workspaceId, planned.templateId);
  if (!template) {
    notes.push(`Node "${planned.nodeId}": template ${planned.templateId} no longer exists; the workflow would fail this send`);
    return { ...base, subject: null };
  }
  const content = { id: template.versionId, channels: template.channels, format: template.format, subject: template.subject, body: template.body, channelText: template.channelText };
  try {
    const rendered = await templateRenderer.render(content, variables);
    if (planned.channel === 'email') return { ...base, subject: rendered.subject, ...(rendered.html !== null && { html: rendered.html }), text: rendered.text };
    // As activities/chat-render.ts: the channel's own text wins over the plain text of the body.
    const text = rendered.channelText?.[planned.channel] ?? (rendered.html !== null && !rendered.text ? htmlToPlainText(rendered.html) : rendered.text);
    return { ...base, subject: null, text };
  } catch (error) {
    if (!isAppError(error) || error.code !== 'template_invalid') throw error;
    notes.push(`Node "${planned.nodeId}": the template does not render (${error.message}); the workflow would fail this send`);
    return { ...base, subject: null };
  }
}

export async function simulate(deps: AutomationSimulationDeps, workspaceId: string, automationId: string, body: SimulateInput): Promise<SimulationResult> {
  const { db } = deps;
  const version = await versionOf(db, workspaceId, automationId, body.version);
  const subject = await subjectOf(db, workspaceId, body);
  const startAt = body.startAt ? new Date(body.startAt) : nowOf(deps);
  const events: SimulatedEvent[] = body.events.map((event) => ({ name: event.event, properties: event.properties, at: new Date(event.at) }));
  const settings = await readJourneySettings(db, workspaceId);
  const timeZone = contactTimeZone(settings, subject.attributes);
  const notes: string[] = [];

  let recentSends: RecentSend[] = [];
  const longestWindow = Math.max(0, ...settings.frequencyCaps.map((cap) => cap.windowMs));
  if (subject.contactId !== null && longestWindow > 0) {
    recentSends = await recentMarketingSends(db, workspaceId, subject.contactId, new Date(startAt.getTime() - longestWindow), startAt);
  }

  const stored = subject.contactId !== null ? await storedBranches(deps, workspaceId, subject.contactId, version.graph) : null;
  const unevaluated = new Set<string>();
  const branch = (node: BranchNode, at: Date): boolean => {
    if (stored) return stored.get(node.id) ?? false;
    const result = matchSynthetic(node.condition, { attributes: subject.attributes, channels: new Set(subject.reach.keys()), events }, at);
    for (const what of result.unevaluated) unevaluated.add(`Branch "${node.id}": a ${what} needs a stored contact; taken as false`);
    return result.matches;
  };

  const run = simulateJourney({
    graph: version.graph,
    goal: version.goal,
    startAt,
    events,
    settings,
    timeZone,
    recentSends,
    reach: (channel) => subject.reach.get(channel) ?? null,
    branch,
  });

  notes.push(...unevaluated);
  for (const step of run.path) {
    const node = nodeById(version.graph, step.nodeId);
    if (step.outcome === 'unreachable') notes.push(`Node "${step.nodeId}": no channel of the message reaches the contact; the journey skips it`);
    if (stored && node.type === 'branch' && hasRule(node.condition as AudienceRules, ['event'])) {
      notes.push(`Branch "${step.nodeId}": evaluated against the stored contact as of now; the simulated events are not counted`);
    }
  }

  const variables = { contact: { ...subject.attributes, id: subject.contactId, email: subject.email } };
  const messages: SimulationResult['messages'] = [];
  for (const planned of run.messages) {
    messages.push(await renderPlanned(deps, workspaceId, planned, variables, notes));
    const node = nodeById(version.graph, planned.nodeId);
    if (planned.channel === 'whatsapp' && node.type === 'message') notes.push(whatsAppWindowNote(node.id, node.contentSid !== undefined));
  }

  const path = run.path.map((step) => {
    const node = nodeById(version.graph, step.nodeId);
    const subjectLine = messages.find((message) => message.nodeId === step.nodeId)?.subject ?? null;
    return { nodeId: step.nodeId, nodeType: step.nodeType, label: nodeLabelOf(node, subjectLine), at: step.at.toISOString(), outcome: step.outcome };
  });
  return {
    path,
    messages,
    outcome: { status: run.outcome.status, exitReason: run.outcome.exitReason, at: run.outcome.at.toISOString() },
    version: version.version,
    versionId: version.versionId,
    notes,
  };
}

/**
 * The simulation shows the template's text; the journey decides WhatsApp's 24-hour window when it queues
 * the message (services/acceptance/journey-message.ts), which a fake clock cannot know ahead.
 */
function whatsAppWindowNote(nodeId: string, hasContentTemplate: boolean): string {
  return hasContentTemplate
    ? `Node "${nodeId}": shown as free-form text; if the contact has not written within 24 hours when it is queued, the content template (contentSid) goes instead`
    : `Node "${nodeId}": free-form WhatsApp; if the contact has not written within 24 hours when it is queued, WhatsApp is passed over (outside_whatsapp_window)`;
}

/** The API's simulation service; `simulate` above is the whole of it. */
export function createAutomationSimulation(deps: AutomationSimulationDeps) {
  return {
    simulate: (workspaceId: string, automationId: string, body: SimulateInput) => simulate(deps, workspaceId, automationId, body),
  };
}

export type AutomationSimulation = ReturnType<typeof createAutomationSimulation>;
