import type { Sequelize } from 'sequelize';
import { AppError } from '../../core/errors';
import { findAutomation } from '../../db/repositories/automations';
import { type LinkClicks, linkStats } from '../../db/repositories/link-stats';

/**
 * GET /automations/:id/links: per-link statistics of the automation's journey messages, every version
 * together (the same query as GET /emails/links and GET /campaigns/:id/links, scoped by
 * messages.automation_id). The route answers it through api/emails/views.ts linkStatsView.
 */
export function createAutomationLinks(db: Sequelize) {
  return {
    async links(workspaceId: string, automationId: string): Promise<LinkClicks[]> {
      if (!(await findAutomation(db, workspaceId, automationId))) throw AppError.notFound('Automation');
      return linkStats(db, workspaceId, { automationId });
    },
  };
}

export type AutomationLinks = ReturnType<typeof createAutomationLinks>;
