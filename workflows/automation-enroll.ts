import { continueAsNew, proxyActivities } from '@temporalio/workflow';
import type { Activities } from '../activities';
import type { EnrollAudience } from '../core/journeys/enrollment';

export interface AutomationEnrollInput {
  workspaceId: string;
  automationId: string;
  /** The id POST /automations/:id/enroll answered; names the workflow. */
  requestId: string;
  audience: EnrollAudience;
  /** Contacts enrolled so far (a position in the audience's order), carried across continue-as-new. */
  cursor?: string | null;
  /** Enrollments made by earlier runs of this request, carried across continue-as-new. */
  enrolled?: number;
  /** Contacts per page (ENROLL_PAGE_SIZE when absent; tests page small audiences). */
  pageSize?: number;
}

/** Our own database and Temporal only: retried until they answer. */
const { enrollAudiencePage } = proxyActivities<Activities>({
  startToCloseTimeout: '5 minutes',
  retry: { initialInterval: '5 seconds', backoffCoefficient: 2, maximumInterval: '2 minutes' },
});

/** Contacts per page: one activity enrolls and starts them. */
export const ENROLL_PAGE_SIZE = 500;
/** Pages per run, so the history stays short (each page is a few events). */
const PAGES_PER_RUN = 50;

/**
 * Enrolls an audience in pages by contact id (`automation-enroll:<requestId>`): each page enrolls its
 * contacts in the automation's current version and starts their journeys. It stops early when the
 * automation is paused or archived. Answers how many contacts it enrolled.
 */
export async function automationEnrollWorkflow(input: AutomationEnrollInput): Promise<number> {
  let cursor = input.cursor ?? null;
  let enrolled = input.enrolled ?? 0;
  for (let page = 0; page < PAGES_PER_RUN; page += 1) {
    const result = await enrollAudiencePage({ workspaceId: input.workspaceId, automationId: input.automationId, audience: input.audience, cursor, limit: input.pageSize ?? ENROLL_PAGE_SIZE });
    enrolled += result.enrolled;
    cursor = result.cursor;
    if (result.state !== 'more') return enrolled;
  }
  return continueAsNew<typeof automationEnrollWorkflow>({ ...input, cursor, enrolled });
}
