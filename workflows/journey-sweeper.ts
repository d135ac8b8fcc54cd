import { continueAsNew, proxyActivities, sleep } from '@temporalio/workflow';
import type { Activities } from '../activities';

export interface JourneySweeperInput {
  /** Time between rounds (15 s when absent). */
  intervalMs?: number;
  /** Rows younger than this are left to their request (30 s when absent). */
  olderThanMs?: number;
  /** Most enrollments and events per round (200 when absent). */
  limit?: number;
}

/** Our own database and Temporal only: retried until they answer. */
const { sweepJourneys } = proxyActivities<Activities>({
  startToCloseTimeout: '5 minutes',
  retry: { initialInterval: '10 seconds', backoffCoefficient: 2, maximumInterval: '5 minutes' },
});

/** Rounds per run, so the history stays short (each round is a few events). */
const ROUNDS_PER_RUN = 100;

/**
 * One for the deployment (id `journey-sweeper`): the outbox of journeys. Each round starts enrollments
 * whose journey never started and matches events stored while Temporal was away (activities/journey-sweeper.ts);
 * a full round goes again at once, so a backlog drains quickly.
 */
export async function journeySweeperWorkflow(input: JourneySweeperInput = {}): Promise<void> {
  const limit = input.limit ?? 200;
  for (let round = 0; round < ROUNDS_PER_RUN; round += 1) {
    const report = await sweepJourneys({ olderThanMs: input.olderThanMs ?? 30_000, limit });
    const full = report.unstarted >= limit || report.unprocessed >= limit;
    if (!full) await sleep(input.intervalMs ?? 15_000);
  }
  await continueAsNew<typeof journeySweeperWorkflow>(input);
}
