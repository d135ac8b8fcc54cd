import { defineSignal } from '@temporalio/workflow';
import type { EventMatched } from '../core/journeys/graph';

/**
 * What the outside world tells a running journey (`enrollment:<enrollmentId>`): a behavioural event of
 * its contact (POST /events; a goal or a wait_for_event may be waiting for it), and an exit asked for
 * through the API. Defined apart from the workflow so the API's starts and signals import no interpreter.
 */
export interface JourneyEvent {
  /** The stored event's id: a signal delivered twice (a retry, the sweeper) is counted once. */
  eventId: string;
  name: string;
  occurredAt: string;
  /**
   * What the event matched in this enrollment's version, decided where the event is stored
   * (services/journey-events.ts): the signal carries ids and this verdict, never the event's properties,
   * because a workflow's history is readable by anyone with the Temporal UI (docs/security.md). Absent on
   * the trigger event of a start, which neither a goal nor a wait counts.
   */
  matched?: EventMatched;
  /**
   * Only in histories recorded before signals carried ids only: the workflow still matches these
   * properties itself, so those runs replay and decide as they did.
   */
  properties?: Record<string, unknown>;
}

export const journeyEventSignal = defineSignal<[JourneyEvent]>('event');

export type ExitRequestReason = 'manual' | 'archived';
export const exitEnrollmentSignal = defineSignal<[{ reason: ExitRequestReason }]>('exit');

/** Where a journey stands, carried across continue-as-new. */
export interface JourneyPosition {
  /** The node to run next; null once the journey ran off its last node. */
  nodeId: string | null;
  /** Ids of the events already taken into account, newest last (bounded). */
  seenEventIds: string[];
}

export interface JourneyWorkflowInput {
  workspaceId: string;
  enrollmentId: string;
  /** Absent on the first run: the journey starts at the version's entry. */
  position?: JourneyPosition;
}

/** How an enrollment ended (enrollments.status and exit_reason). */
export type EnrollmentEnd =
  | { status: 'completed'; reason: 'completed' | 'exit_node' }
  | { status: 'exited'; reason: 'goal_reached' | ExitRequestReason | 'not_found' };
