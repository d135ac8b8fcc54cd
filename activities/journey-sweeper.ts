import type { Logger } from 'pino';
import type { Sequelize } from 'sequelize';
import { unprocessedEvents } from '../db/repositories/contact-events';
import { unstartedEnrollments } from '../db/repositories/enrollments';
import { type JourneyControl, matchStoredEvent, startEnrollments } from '../services/journey-events';

export interface JourneySweeperDeps {
  db: Sequelize;
  /** Journey starts and event signals (a port: activities/ports.ts). */
  journeys: JourneyControl;
  logger?: Logger;
}

export interface SweepOptions {
  /** Rows younger than this are still being handled by their request. */
  olderThanMs: number;
  /** Most enrollments, and most events, one round takes. */
  limit: number;
}

export interface SweepReport {
  /** Unstarted enrollments found, and how many of them started. */
  unstarted: number;
  started: number;
  /** Unprocessed events found, and how many were matched and handed to Temporal. */
  unprocessed: number;
  processed: number;
}

/** How long one round may spend on Temporal for its starts, and for each event, before leaving the rest to the next round. */
const TEMPORAL_TIMEOUT_MS = 30_000;

export function createJourneySweeperActivities(deps: JourneySweeperDeps) {
  const { db } = deps;
  const journeys = { db, journeys: deps.journeys, logger: deps.logger };
  return {
    /**
     * One round of the sweeper: starts the journeys of enrollments whose start was never confirmed
     * (Temporal was away, or the process died between the insert and the start), then matches events
     * stored but never matched, with the same code POST /events runs (services/journey-events.ts).
     * Both are safe to repeat: starts by workflow id, signals by event id.
     */
    async sweepJourneys(options: SweepOptions): Promise<SweepReport> {
      const before = new Date(Date.now() - options.olderThanMs);
      const enrollments = await unstartedEnrollments(db, { enteredBefore: before, limit: options.limit });
      // Each start fails on its own (it stays in the outbox); the deadline keeps a Temporal that hangs
      // from holding the round past its activity timeout.
      const started = await journeys.journeys.within(TEMPORAL_TIMEOUT_MS, () => startEnrollments(journeys, enrollments));
      const events = await unprocessedEvents(db, { storedBefore: before, limit: options.limit });
      let processed = 0;
      for (const event of events) {
        const outcome = await matchStoredEvent({ ...journeys, temporalTimeoutMs: TEMPORAL_TIMEOUT_MS }, event);
        // Temporal is away again: the rest waits for the next round rather than each timing out in turn.
        if (!outcome.processed) break;
        processed += 1;
      }
      return { unstarted: enrollments.length, started, unprocessed: events.length, processed };
    },
  };
}
