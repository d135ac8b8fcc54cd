import type { Logger } from 'pino';
import type { Sequelize } from 'sequelize';
import { inLanes } from '../core/lanes';
import { type EventMatched, matchedInVersion, matchesEvent } from '../core/journeys/graph';
import { markEventProcessed, type StoredEvent } from '../db/repositories/contact-events';
import {
  enrollByEvent,
  listeningEnrollments,
  markEnrollmentsStarted,
  triggerCandidates,
  type UnstartedEnrollment,
  type NewEnrollment,
  unstartedOfEvent,
} from '../db/repositories/enrollments';

/**
 * What a behavioural event does to journeys, shared by POST /events and the journey sweeper, so an event
 * stored while Temporal was away is matched by the same code later. The database decides first (who is
 * enrolled, who is listening), then Temporal is told; every step repeats safely: enrollments by the
 * trigger and one-active indexes, starts by their workflow id, signals by the event id the journey
 * remembers.
 */

/**
 * An event as a journey receives it (core/journeys/enrollment.ts `JourneyEvent`): ids and what it
 * matched, never its properties. A signal's payload stays in the workflow's Temporal history, which
 * anyone with the Temporal UI reads; the properties stay in contact_events, behind the API's scopes, and
 * are matched here, where they are stored (docs/security.md "Journeys and Temporal history").
 */
export interface JourneyEventPayload {
  eventId: string;
  name: string;
  occurredAt: string;
  /** The goal and wait_for_event nodes of the enrollment's version it matched; absent on a start's trigger. */
  matched?: EventMatched;
}

/**
 * How journeys are reached, given by the caller (temporal/journeys.ts `journeyControl`, wired in api/app.ts and workers/): services/ never
 * talks to Temporal itself.
 */
export interface JourneyControl {
  /** Starts an enrollment's journey, with the event that triggered it; a journey already running counts as started. */
  start: (enrollment: NewEnrollment, triggerEvent?: JourneyEventPayload) => Promise<void>;
  /** Hands a running journey an event; false when the journey already ended. */
  signal: (enrollmentId: string, event: JourneyEventPayload) => Promise<boolean>;
  /** Runs the calls inside under one deadline. */
  within: <T>(timeoutMs: number, work: () => Promise<T>) => Promise<T>;
}

export interface JourneyEventDeps {
  db: Sequelize;
  journeys: JourneyControl;
  /** How long the Temporal part may take in all before it is left to the sweeper. */
  temporalTimeoutMs: number;
  logger?: Logger;
}

export interface EventOutcome {
  /** Enrollments this event created now. */
  triggered: number;
  /** Running enrollments whose goal the event matches (they end `goal_reached` when they read it). */
  goalsCompleted: number;
  /** Temporal was told everything: the event is marked processed. */
  processed: boolean;
}

/** Journeys started or signalled at once: enough for an event that fans out, few enough for a shared server. */
const TEMPORAL_LANES = 8;

const journeyEvent = (event: { id: string; name: string; occurredAt: Date }, matched?: EventMatched): JourneyEventPayload => ({
  eventId: event.id,
  name: event.name,
  occurredAt: event.occurredAt.toISOString(),
  ...(matched && { matched }),
});

/**
 * Starts the journeys of these enrollments (with the triggering event, signalWithStart) and takes the
 * started ones out of the outbox. Answers how many started; one that fails stays for the sweeper.
 */
export async function startEnrollments(deps: Pick<JourneyEventDeps, 'db' | 'journeys' | 'logger'>, enrollments: readonly UnstartedEnrollment[]): Promise<number> {
  const started: string[] = [];
  let failure: unknown = null;
  await inLanes(enrollments, TEMPORAL_LANES, async (enrollment) => {
    try {
      await deps.journeys.start(enrollment, enrollment.triggerEvent ? journeyEvent(enrollment.triggerEvent) : undefined);
      started.push(enrollment.enrollmentId);
    } catch (error) {
      failure ??= error;
    }
  });
  await markEnrollmentsStarted(deps.db, started);
  if (failure !== null) deps.logger?.warn({ err: failure, failed: enrollments.length - started.length }, 'journeys not started; the sweeper will start them');
  return started.length;
}

/**
 * Matches a stored event: enrolls its contact in the active automations its name and properties trigger,
 * starts those journeys with the event, and signals the contact's running journeys that listen for it
 * (goal, wait_for_event). Marks the event processed once Temporal took all of it; when Temporal cannot
 * be reached the counts still come from the database and the sweeper finishes the rest.
 */
export async function matchStoredEvent(deps: JourneyEventDeps, event: StoredEvent): Promise<EventOutcome> {
  const { db } = deps;
  const candidates = await triggerCandidates(db, event.workspaceId, event.name);
  const triggeredVersions = candidates.filter((candidate) => candidate.triggers.some((trigger) => matchesEvent(trigger, event)));
  const triggered = await enrollByEvent(db, event.workspaceId, event, triggeredVersions);
  const listeners = await listeningEnrollments(db, event.workspaceId, event.contactId, event);
  // Listening is by name; a journey the properties match nothing of is not told at all.
  const verdicts = listeners
    .map((listener) => ({ enrollmentId: listener.enrollmentId, matched: matchedInVersion(listener, event) }))
    .filter((verdict) => verdict.matched.goal || verdict.matched.nodeIds.length > 0);
  const goalsCompleted = verdicts.filter((verdict) => verdict.matched.goal).length;

  let processed = false;
  try {
    await deps.journeys.within(deps.temporalTimeoutMs, async () => {
      // This event's enrollments, including ones an earlier attempt inserted but could not start.
      const unstarted = await unstartedOfEvent(db, event.workspaceId, event.id, triggeredVersions.map((version) => version.automationId));
      const started = await startEnrollments(deps, unstarted);
      if (started < unstarted.length) throw new Error(`${unstarted.length - started} journeys of event ${event.id} not started`);
      await inLanes(verdicts, TEMPORAL_LANES, async (verdict) => {
        await deps.journeys.signal(verdict.enrollmentId, journeyEvent(event, verdict.matched));
      });
    });
    await markEventProcessed(db, event.workspaceId, event.id);
    processed = true;
  } catch (err) {
    deps.logger?.warn({ err, eventId: event.id }, 'event stored but not handed to its journeys; the sweeper will match it');
  }
  return { triggered, goalsCompleted, processed };
}
