import type { z } from 'zod';
import type { AutomationRecord, AutomationVersionRecord } from '../../db/repositories/automations';
import type { EnrollmentWithSkips } from './enrollment';
import type { NodeStats } from './stats';
import type { AutomationDetailSchema, AutomationStatsSchema, AutomationSummarySchema, EnrollmentSchema } from './schemas';

export function automationSummaryView(automation: AutomationRecord): z.infer<typeof AutomationSummarySchema> {
  const { triggers } = automation.draft;
  return {
    id: automation.id,
    name: automation.name,
    status: automation.status,
    description: automation.description,
    trigger: triggers[0] ?? null,
    triggers,
    version: automation.version,
    activeEnrollments: automation.activeEnrollments,
    createdAt: automation.createdAt.toISOString(),
  };
}

export function automationDetailView(automation: AutomationRecord, current: AutomationVersionRecord | null): z.infer<typeof AutomationDetailSchema> {
  return {
    ...automationSummaryView(automation),
    versionId: automation.currentVersionId,
    draftVersionId: automation.draftVersionId,
    goal: automation.draft.goal,
    graph: { ...automation.draft.graph },
    publishedGraph: current ? { ...current.graph } : null,
  };
}

export function enrollmentView(enrollment: EnrollmentWithSkips): z.infer<typeof EnrollmentSchema> {
  return {
    id: enrollment.id,
    automationId: enrollment.automationId,
    contactId: enrollment.contactId,
    version: enrollment.version,
    versionId: enrollment.versionId,
    status: enrollment.status,
    currentNodeId: enrollment.currentNodeId,
    currentNodeType: enrollment.currentNodeType,
    currentNodeLabel: enrollment.currentNodeLabel,
    exitReason: enrollment.exitReason,
    enteredAt: enrollment.enteredAt.toISOString(),
    exitedAt: enrollment.exitedAt ? enrollment.exitedAt.toISOString() : null,
    skippedSteps: enrollment.skippedSteps.map((skip) => ({ nodeId: skip.nodeId, nodeLabel: skip.nodeLabel, reason: skip.reason, at: skip.at.toISOString() })),
  };
}

export function automationStatsView(automationId: string, nodes: NodeStats[]): z.infer<typeof AutomationStatsSchema> {
  return {
    automationId,
    nodes: nodes.map((node) => ({ nodeId: node.nodeId, nodeType: node.nodeType, label: node.label, skipped: node.skipped, skippedByReason: node.skippedByReason })),
  };
}
