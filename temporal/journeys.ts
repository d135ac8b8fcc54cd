import type { Client } from '@temporalio/client';
import { TEMPORAL_PRIORITY } from '../core/dispatch';
import { automationEnrollWorkflowId, enrollmentWorkflowId } from '../core/ids';
import type { ExitRequestReason, JourneyEvent } from '../core/journeys/enrollment';
import { taskQueueName } from '../core/task-queues';
import { automationEnrollWorkflow, type AutomationEnrollInput } from '../workflows/automation-enroll';
import { journeyWorkflow } from '../workflows/journey';
import { exitEnrollmentSignal, journeyEventSignal, type JourneyWorkflowInput } from '../workflows/journey-signals';
import { withDeadline } from './deadline';
import { searchAttributes } from './search-attributes';
import { signalIfRunning, startOnce } from './start-once';

/** The enrollment whose journey is started, and what operators find it by. */
export interface EnrollmentStart {
  workspaceId: string;
  enrollmentId: string;
  automationId: string;
  contactId: string;
}

/** An enrollment's journey, at journey priority with the workspace as fairness key. */
function journeyStart(taskQueuePrefix: string, enrollment: EnrollmentStart) {
  return {
    workflowId: enrollmentWorkflowId(enrollment.enrollmentId),
    taskQueue: taskQueueName(taskQueuePrefix, 'default'),
    args: [{ workspaceId: enrollment.workspaceId, enrollmentId: enrollment.enrollmentId, enter: 'at-once' }] as [JourneyWorkflowInput],
    workflowIdReusePolicy: 'REJECT_DUPLICATE' as const,
    priority: { priorityKey: TEMPORAL_PRIORITY.automation, fairnessKey: enrollment.workspaceId },
    typedSearchAttributes: searchAttributes({
      WorkspaceId: enrollment.workspaceId,
      AutomationId: enrollment.automationId,
      EnrollmentId: enrollment.enrollmentId,
      ContactId: enrollment.contactId,
      Kind: 'automation',
    }),
  };
}

/**
 * Starts the journey of an enrollment, `enrollment:<enrollmentId>`. With the event that triggered it, one
 * signalWithStart both starts it and hands it the event. A start that finds it running succeeded.
 */
export async function startEnrollmentWorkflow(client: Client, taskQueuePrefix: string, enrollment: EnrollmentStart, triggerEvent?: JourneyEvent): Promise<void> {
  const options = journeyStart(taskQueuePrefix, enrollment);
  if (!triggerEvent) {
    await startOnce(() => client.workflow.start(journeyWorkflow, options));
    return;
  }
  await client.workflow.signalWithStart(journeyWorkflow, { ...options, signal: journeyEventSignal, signalArgs: [triggerEvent] });
}

/** Hands a running journey an event of its contact; a journey that already ended has nothing to do with it. */
export async function signalEnrollmentEvent(client: Client, enrollmentId: string, event: JourneyEvent): Promise<boolean> {
  return signalIfRunning(() => client.workflow.getHandle(enrollmentWorkflowId(enrollmentId)).signal(journeyEventSignal, event));
}

/** Asks a running journey to exit (POST /automations/:id/enrollments/:enrollmentId/exit, or an archive). */
export async function signalEnrollmentExit(client: Client, enrollmentId: string, reason: ExitRequestReason): Promise<boolean> {
  return signalIfRunning(() => client.workflow.getHandle(enrollmentWorkflowId(enrollmentId)).signal(exitEnrollmentSignal, { reason }));
}

/**
 * Journeys as services/journey-events.ts reaches them (its `JourneyControl` port): starts, event signals,
 * and one deadline over a group of calls, so a request gives up on an unreachable Temporal in time.
 */
export function journeyControl(client: Client, taskQueuePrefix: string) {
  return {
    start: (enrollment: EnrollmentStart, triggerEvent?: JourneyEvent) => startEnrollmentWorkflow(client, taskQueuePrefix, enrollment, triggerEvent),
    signal: (enrollmentId: string, event: JourneyEvent) => signalEnrollmentEvent(client, enrollmentId, event),
    within: <T>(timeoutMs: number, work: () => Promise<T>): Promise<T> => withDeadline(client, timeoutMs, work),
  };
}

/** The workflow that enrolls a list's or segment's members (or up to 1,000 ids) in pages. */
export async function startAutomationEnrollWorkflow(client: Client, taskQueuePrefix: string, input: AutomationEnrollInput): Promise<void> {
  await startOnce(() =>
    client.workflow.start(automationEnrollWorkflow, {
      workflowId: automationEnrollWorkflowId(input.requestId),
      taskQueue: taskQueueName(taskQueuePrefix, 'default'),
      args: [input],
      workflowIdReusePolicy: 'REJECT_DUPLICATE',
      priority: { priorityKey: TEMPORAL_PRIORITY.automation, fairnessKey: input.workspaceId },
      typedSearchAttributes: searchAttributes({ WorkspaceId: input.workspaceId, AutomationId: input.automationId, Kind: 'automation' }),
    }),
  );
}
