import { randomUUID } from 'node:crypto';
import type { Client } from '@temporalio/client';
import type { Logger } from 'pino';
import type { Sequelize } from 'sequelize';
import { AppError } from '../../core/errors';
import { findAutomation } from '../../db/repositories/automations';
import { type EnrollmentRecord, type EnrollmentStatus, exitEnrollment, listEnrollments } from '../../db/repositories/enrollments';
import { type JourneySkip, skipsOfEnrollments } from '../../db/repositories/journey-skips';
import { findList } from '../../db/repositories/lists';
import { findSegment } from '../../db/repositories/segments';
import type { EnrollAudience } from '../../core/journeys/enrollment';
import { withDeadline } from '../../temporal/deadline';
import { signalEnrollmentExit, startAutomationEnrollWorkflow } from '../../temporal/journeys';
import type { AutomationEnrollInput } from './schemas';

export interface EnrollmentServiceDeps {
  db: Sequelize;
  temporal: Client;
  taskQueuePrefix: string;
  logger: Logger;
  /** How long a workflow start or signal may take before the request gives up on Temporal. */
  temporalTimeoutMs?: number;
}

/** An enrollment with the message steps its journey skipped at run time (journey_skips). */
export type EnrollmentWithSkips = EnrollmentRecord & { skippedSteps: JourneySkip[] };

/** Enroll requests, and the enrollments of an automation: listed, and ended by hand. */
/** How long a workflow start or signal may take unless the deps say otherwise. */
const TEMPORAL_TIMEOUT_MS = 3_000;

/** The enrollments with the message steps their journeys skipped. */
export async function withSkips({ db }: EnrollmentServiceDeps, workspaceId: string, rows: EnrollmentRecord[]): Promise<EnrollmentWithSkips[]> {
  const skips = await skipsOfEnrollments(db, workspaceId, rows.map((row) => row.id));
  return rows.map((row) => ({ ...row, skippedSteps: skips.get(row.id) ?? [] }));
}


/**
 * Queues the enrollment of a list's or segment's members or of given contacts: the enroll workflow
 * pages through them (workflows/automation-enroll.ts). The automation must be active; the list or
 * segment must be the workspace's (404, as for an unknown id).
 */
export async function enrollAudience(deps: EnrollmentServiceDeps, workspaceId: string, automationId: string, input: AutomationEnrollInput) {
  const { db } = deps;
  const automation = await findAutomation(db, workspaceId, automationId);
  if (!automation) throw AppError.notFound('Automation');
  if (automation.status !== 'active') throw new AppError('conflict', `The automation is ${automation.status}: only an active automation enrolls`);
  let audience: EnrollAudience;
  if (input.listId) {
    if (!(await findList(db, workspaceId, input.listId))) throw AppError.notFound('List');
    audience = { listId: input.listId };
  } else if (input.segmentId) {
    if (!(await findSegment(db, workspaceId, input.segmentId))) throw AppError.notFound('Segment');
    audience = { segmentId: input.segmentId };
  } else {
    audience = { contactIds: [...new Set(input.contactIds)] };
  }
  const requestId = randomUUID();
  try {
    await withDeadline(deps.temporal, deps.temporalTimeoutMs ?? TEMPORAL_TIMEOUT_MS, () =>
      startAutomationEnrollWorkflow(deps.temporal, deps.taskQueuePrefix, { workspaceId, automationId, requestId, audience }),
    );
  } catch (err) {
    // Nothing was stored: unlike an event, an enroll request has no row to finish later.
    deps.logger.warn({ err, automationId }, 'the enroll workflow could not be started');
    throw new AppError('service_unavailable', 'The background workers cannot be reached; nothing was enrolled, try again');
  }
  return { id: requestId, queued: true, audience: 'listId' in audience ? ('list' as const) : 'segmentId' in audience ? ('segment' as const) : ('contacts' as const) };
}

/** A page of the automation's enrollments, each with the message steps its journey skipped. */
export async function enrollmentPage(deps: EnrollmentServiceDeps, workspaceId: string, automationId: string, page: { status?: EnrollmentStatus; limit: number; offset: number }) {
  if (!(await findAutomation(deps.db, workspaceId, automationId))) throw AppError.notFound('Automation');
  const { rows, total } = await listEnrollments(deps.db, workspaceId, automationId, page);
  return { rows: await withSkips(deps, workspaceId, rows), total };
}

/**
 * Ends an active enrollment (`exited`, `manual`) in the database, then tells its journey. The row is
 * the truth: the journey reads it at its next step, so a signal lost to an unreachable Temporal only
 * delays the exit.
 */
export async function exitEnrollmentNow(deps: EnrollmentServiceDeps, workspaceId: string, automationId: string, enrollmentId: string): Promise<EnrollmentWithSkips> {
  const outcome = await exitEnrollment(deps.db, workspaceId, automationId, enrollmentId, 'manual');
  if (outcome.state === 'not-found') throw AppError.notFound('Enrollment');
  if (outcome.state === 'ended') throw new AppError('conflict', `The enrollment already ended (${outcome.status})`);
  try {
    await withDeadline(deps.temporal, deps.temporalTimeoutMs ?? TEMPORAL_TIMEOUT_MS, () => signalEnrollmentExit(deps.temporal, enrollmentId, 'manual'));
  } catch (err) {
    deps.logger.warn({ err, enrollmentId }, 'exit signal not delivered; the journey sees the exit at its next step');
  }
  const [exited] = await withSkips(deps, workspaceId, [outcome.enrollment]);
  return exited;
}

export function createEnrollmentService(deps: EnrollmentServiceDeps) {
  return {
    enroll: (workspaceId: string, automationId: string, input: AutomationEnrollInput) => enrollAudience(deps, workspaceId, automationId, input),
    list: (workspaceId: string, automationId: string, page: { status?: EnrollmentStatus; limit: number; offset: number }) => enrollmentPage(deps, workspaceId, automationId, page),
    exit: (workspaceId: string, automationId: string, enrollmentId: string) => exitEnrollmentNow(deps, workspaceId, automationId, enrollmentId),
  };
}

export type EnrollmentService = ReturnType<typeof createEnrollmentService>;
