import { defineSignal } from '@temporalio/workflow';
import type { ExitRequestReason, JourneyEvent } from '../core/journeys/enrollment';

/**
 * What the outside world tells a running journey (`enrollment:<enrollmentId>`): a behavioural event of
 * its contact, and an exit asked for through the API. Defined apart from the workflow so the client's
 * starts and signals (temporal/journeys.ts) import no interpreter; the payload types are in
 * core/journeys/enrollment.ts, which activities and services share.
 */
export const journeyEventSignal = defineSignal<[JourneyEvent]>('event');

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
  /**
   * `at-once`: the first run loads the enrollment and records its entry node in one local activity
   * (`enterJourney`), one workflow activation fewer per journey entering (docs/benchmarks.md, journeys).
   * Absent in journeys started before issue 33, which load and record apart, and replay so: carried by
   * the start rather than a patch, whose marker would also upsert a search attribute on every journey.
   */
  enter?: 'at-once';
}
