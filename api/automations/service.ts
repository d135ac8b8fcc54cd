import { AppError } from '../../core/errors';
import type { EventMatch } from '../../core/journeys/graph';
import { checkedGraph, definitionError, listenedEvents, whatsAppWindowWarnings } from '../../core/journeys/validation';
import {
  activateAutomation,
  type AutomationDraft,
  type AutomationRecord,
  archiveAutomation,
  findAutomation,
  findAutomationVersion,
  insertAutomation,
  listAutomations,
  pauseAutomation,
  updateAutomationDraft,
} from '../../db/repositories/automations';
import type { CreateAutomationInput, UpdateAutomationInput } from './schemas';
import { attachmentIssues, type SendabilityDeps, senderIssues, templateIssues } from './sendability';

/** The triggers of a body: `trigger` is shorthand for one; absent leaves them as they were (an update). */
function triggersOf(input: { trigger?: EventMatch; triggers?: EventMatch[] }): EventMatch[] | undefined {
  if (input.trigger) return [input.trigger];
  return input.triggers;
}

const notInStatus = (status: string, action: string) => new AppError('conflict', `The automation is ${status}: it cannot be ${action}`);

/**
 * The whole definition checked as activation will check it: the graph, then what its message nodes need
 * (templates, senders, attachments; ./sendability.ts). `activating` adds what only running needs: a sender
 * for nodes without one.
 */
async function checkDefinition(deps: SendabilityDeps, workspaceId: string, draft: AutomationDraft, activating = false) {
  const graph = checkedGraph(draft.graph);
  const issues = [
    ...(await templateIssues(deps, workspaceId, draft.graph)),
    ...(await senderIssues(deps, workspaceId, draft.graph, { requireSender: activating })),
    ...(await attachmentIssues(deps, workspaceId, draft.graph)),
  ];
  if (issues.length > 0) throw definitionError(issues);
  return graph;
}

export async function getAutomation({ db }: SendabilityDeps, workspaceId: string, automationId: string): Promise<AutomationRecord> {
  const automation = await findAutomation(db, workspaceId, automationId);
  if (!automation) throw AppError.notFound('Automation');
  return automation;
}

/** The automation with its current version (null before the first activation). */
export async function automationDetail(deps: SendabilityDeps, workspaceId: string, automationId: string) {
  const automation = await getAutomation(deps, workspaceId, automationId);
  const current = automation.currentVersionId ? await findAutomationVersion(deps.db, workspaceId, automation.currentVersionId) : null;
  return { automation, current };
}

/** A draft, checked as activation will check it, so a definition that could never run is refused at once. */
export async function createAutomation(deps: SendabilityDeps, workspaceId: string, input: CreateAutomationInput): Promise<AutomationRecord> {
  const draft: AutomationDraft = { triggers: triggersOf(input) ?? [], goal: input.goal ?? null, graph: input.graph };
  await checkDefinition(deps, workspaceId, draft);
  return insertAutomation(deps.db, workspaceId, { name: input.name, description: input.description ?? null, draft });
}

/** Draft fields change while the automation is not archived; running enrollments keep their version. */
export async function updateAutomation(deps: SendabilityDeps, workspaceId: string, automationId: string, input: UpdateAutomationInput): Promise<AutomationRecord> {
  const automation = await getAutomation(deps, workspaceId, automationId);
  if (automation.status === 'archived') throw notInStatus('archived', 'edited');
  const triggers = triggersOf(input);
  const definitionChanged = triggers !== undefined || input.goal !== undefined || input.graph !== undefined;
  let draft: AutomationDraft | undefined;
  if (definitionChanged) {
    draft = { triggers: triggers ?? automation.draft.triggers, goal: input.goal === undefined ? automation.draft.goal : input.goal, graph: input.graph ?? automation.draft.graph };
    await checkDefinition(deps, workspaceId, draft);
  }
  const outcome = await updateAutomationDraft(deps.db, workspaceId, automationId, { name: input.name, description: input.description, draft });
  if (outcome.state === 'not-found') throw AppError.notFound('Automation');
  if (outcome.state === 'archived') throw notInStatus('archived', 'edited');
  return getAutomation(deps, workspaceId, automationId);
}

/**
 * Publishes the draft as the next immutable version and makes the automation active; an unchanged
 * draft (a resume after a pause) publishes nothing. Templates are checked again: one may have been
 * deleted since the draft was saved. What runs but may not reach everyone (free-form WhatsApp) comes back
 * as warnings.
 */
export async function activateDraft(deps: SendabilityDeps, workspaceId: string, automationId: string) {
  const automation = await getAutomation(deps, workspaceId, automationId);
  if (automation.status === 'archived') throw notInStatus('archived', 'activated');
  const graph = await checkDefinition(deps, workspaceId, automation.draft, true);
  const { triggers, goal } = automation.draft;
  const outcome = await activateAutomation(deps.db, workspaceId, automationId, {
    draftVersionId: automation.draftVersionId,
    triggers,
    goal,
    graph,
    triggerEvents: [...new Set(triggers.map((trigger) => trigger.event))],
    listens: listenedEvents(graph, goal),
  });
  if (outcome.state === 'not-found') throw AppError.notFound('Automation');
  if (outcome.state === 'archived') throw notInStatus('archived', 'activated');
  if (outcome.state === 'draft-changed') throw new AppError('conflict', 'The draft was edited while it was being activated: activate again');
  const activated = await getAutomation(deps, workspaceId, automationId);
  return {
    id: activated.id,
    status: 'active' as const,
    version: activated.version as number,
    versionId: activated.currentVersionId as string,
    warnings: whatsAppWindowWarnings(graph),
  };
}

export async function setPaused({ db }: SendabilityDeps, workspaceId: string, automationId: string) {
  const outcome = await pauseAutomation(db, workspaceId, automationId);
  if (outcome.state === 'not-found') throw AppError.notFound('Automation');
  if (outcome.state === 'refused') throw notInStatus(outcome.status, 'paused');
  return { id: automationId, status: 'paused' as const };
}

export async function setArchived({ db }: SendabilityDeps, workspaceId: string, automationId: string) {
  const outcome = await archiveAutomation(db, workspaceId, automationId);
  if (outcome.state === 'not-found') throw AppError.notFound('Automation');
  if (outcome.state === 'refused') throw notInStatus(outcome.status, 'archived');
  return { id: automationId, status: 'archived' as const };
}

export function createAutomationService(deps: SendabilityDeps) {
  return {
    get: (workspaceId: string, automationId: string) => getAutomation(deps, workspaceId, automationId),
    detail: (workspaceId: string, automationId: string) => automationDetail(deps, workspaceId, automationId),
    list: (workspaceId: string, page: { limit: number; offset: number }) => listAutomations(deps.db, workspaceId, page),
    create: (workspaceId: string, input: CreateAutomationInput) => createAutomation(deps, workspaceId, input),
    update: (workspaceId: string, automationId: string, input: UpdateAutomationInput) => updateAutomation(deps, workspaceId, automationId, input),
    activate: (workspaceId: string, automationId: string) => activateDraft(deps, workspaceId, automationId),
    pause: (workspaceId: string, automationId: string) => setPaused(deps, workspaceId, automationId),
    archive: (workspaceId: string, automationId: string) => setArchived(deps, workspaceId, automationId),
  };
}

export type AutomationService = ReturnType<typeof createAutomationService>;
