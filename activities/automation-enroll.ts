import type { Logger } from 'pino';
import type { Sequelize } from 'sequelize';
import { audiencePage } from '../db/repositories/enrollment-audience';
import { enrollContacts } from '../db/repositories/enrollments';
import { type JourneyControl, startEnrollments } from '../services/journey-events';
import type { EnrollAudience } from '../core/journeys/enrollment';

export interface AutomationEnrollDeps {
  db: Sequelize;
  /** Journey starts (a port: activities/ports.ts). */
  journeys: JourneyControl;
  logger?: Logger;
}

export interface EnrollPageInput {
  workspaceId: string;
  automationId: string;
  audience: EnrollAudience;
  /** The last contact id of the previous page; null for the first. */
  cursor: string | null;
  limit: number;
}

/**
 * `more`: call again from `cursor`; `done`: the audience is through; `stopped`: the automation is no
 * longer active (paused or archived enrolls nobody), or the list or segment was deleted.
 */
export interface EnrollPageResult {
  state: 'more' | 'done' | 'stopped';
  cursor: string | null;
  enrolled: number;
}

export function createAutomationEnrollActivities(deps: AutomationEnrollDeps) {
  const { db } = deps;
  const journeys = { db, journeys: deps.journeys, logger: deps.logger };
  return {
    /**
     * One page of an enroll request: the next contacts of the audience by id, enrolled in the automation's
     * current version (skipping anyone already active in it), then their journeys started. A retry after
     * a crash enrolls nobody twice (the one-active index) and starts what the first attempt left unstarted;
     * what still fails to start is left to the journey sweeper.
     */
    async enrollAudiencePage(input: EnrollPageInput): Promise<EnrollPageResult> {
      const page = await audiencePage(db, input.workspaceId, input.audience, { cursor: input.cursor, limit: input.limit, now: new Date() });
      if ('missing' in page) return { state: 'stopped', cursor: input.cursor, enrolled: 0 };
      const source = 'listId' in input.audience ? 'list' : 'segmentId' in input.audience ? 'segment' : 'contacts';
      const enrolled = page.contactIds.length ? await enrollContacts(db, input.workspaceId, input.automationId, page.contactIds, source) : [];
      if (enrolled === null) return { state: 'stopped', cursor: input.cursor, enrolled: 0 };
      await startEnrollments(journeys, enrolled.map((enrollment) => ({ ...enrollment, triggerEvent: null })));
      const cursor = page.contactIds.at(-1) ?? input.cursor;
      return { state: page.contactIds.length < input.limit ? 'done' : 'more', cursor, enrolled: enrolled.length };
    },
  };
}
