import type { Sequelize } from 'sequelize';
import { AppError } from '../../core/errors';
import { type JourneyGraph, nodeLabelOf } from '../../core/journeys/graph';
import { findAutomation, findAutomationVersion } from '../../db/repositories/automations';
import { type NodeCounts, nodeCountsOf } from '../../db/repositories/journey-skips';

/** One node's counters, with its type and label when the current version has it. */
export interface NodeStats extends NodeCounts {
  nodeType: string | null;
  label: string | null;
}

/**
 * Every node of the current version in graph order (zero when nothing was counted there yet), then the
 * nodes only earlier versions had, which still hold the counts of the enrollments that ran them.
 */
export function nodeStats(graph: JourneyGraph | null, counted: NodeCounts[]): NodeStats[] {
  const byId = new Map(counted.map((node) => [node.nodeId, node]));
  const current = (graph?.nodes ?? []).map((node) => ({
    ...(byId.get(node.id) ?? { nodeId: node.id, skipped: 0, skippedByReason: {} }),
    nodeType: node.type,
    label: nodeLabelOf(node),
  }));
  const known = new Set(current.map((node) => node.nodeId));
  return [...current, ...counted.filter((node) => !known.has(node.nodeId)).map((node) => ({ ...node, nodeType: null, label: null }))];
}

/**
 * GET /automations/:id/stats: the automation's counters per journey node, every version together. Read
 * from journey_node_counts, which the journey activities move as they go, so the read costs one row per
 * node and outcome however many contacts went through.
 */
export function createAutomationStats(db: Sequelize) {
  return {
    async stats(workspaceId: string, automationId: string): Promise<NodeStats[]> {
      const automation = await findAutomation(db, workspaceId, automationId);
      if (!automation) throw AppError.notFound('Automation');
      const current = automation.currentVersionId ? await findAutomationVersion(db, workspaceId, automation.currentVersionId) : null;
      return nodeStats(current?.graph ?? null, await nodeCountsOf(db, workspaceId, automationId));
    },
  };
}

export type AutomationStats = ReturnType<typeof createAutomationStats>;
