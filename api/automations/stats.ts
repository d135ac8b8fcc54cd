import type { Sequelize } from 'sequelize';
import { AppError } from '../../core/errors';
import { findAutomation } from '../../db/repositories/automations';
import { type NodeCounts, nodeCountsOf } from '../../db/repositories/journey-skips';

/**
 * GET /automations/:id/stats: the automation's counters per journey node, every version together. Read
 * from journey_node_counts, which the journey activities move as they go, so the read costs one row per
 * node and outcome however many contacts went through.
 */
export function createAutomationStats(db: Sequelize) {
  return {
    async stats(workspaceId: string, automationId: string): Promise<NodeCounts[]> {
      if (!(await findAutomation(db, workspaceId, automationId))) throw AppError.notFound('Automation');
      return nodeCountsOf(db, workspaceId, automationId);
    },
  };
}

export type AutomationStats = ReturnType<typeof createAutomationStats>;
