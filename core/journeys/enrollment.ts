import type { EventMatched } from './graph';

/**
 * Who an enroll request names (AutomationEnrollRequest: exactly one of them). Shared by the API that
 * accepts it, the enroll workflow that carries it and the repository that pages through it.
 */
export type EnrollAudience = { listId: string } | { segmentId: string } | { contactIds: string[] };

/**
 * An event as a running journey (`enrollment:<enrollmentId>`) receives it, by signal or with its start: a
 * behavioural event of its contact (POST /events; a goal or a wait_for_event may be waiting for it). Here,
 * not beside the signal in workflows/, because the client side (temporal/) and services/ name it too.
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

/** Why a journey was asked to exit through the API: by hand, or because its automation was archived. */
export type ExitRequestReason = 'manual' | 'archived';

/**
 * How an enrollment ended (enrollments.status and exit_reason): the journey workflow's result, which the
 * journey activities record. Shared by both, so activities never import workflows/.
 */
export type EnrollmentEnd =
  | { status: 'completed'; reason: 'completed' | 'exit_node' }
  | { status: 'exited'; reason: 'goal_reached' | ExitRequestReason | 'not_found' };
