import type { Sequelize } from 'sequelize';
import type { AudienceRules } from '../core/audience-rules';
import { fieldsByKey } from '../core/custom-fields';
import { contactTimeZone } from '../core/journeys/delivery-window';
import { journeyStepOf, nodeById, nodeLabelOf } from '../core/journeys/graph';
import { nextLocalTime } from '../core/journeys/local-time';
import { listCustomFields } from '../db/repositories/custom-fields';
import { findJourneyContact } from '../db/repositories/journey-messages';
import { type EnteredJourney, finishEnrollment, type JourneyStep, type LoadedJourney, loadEnrollment, recordStep } from '../db/repositories/journey-progress';
import { readJourneySettings } from '../db/repositories/journey-settings';
import { recordSkip } from '../db/repositories/journey-skips';
import { contactMatchesRules } from '../db/repositories/segments';
import type { EnrollmentEnd } from '../core/journeys/enrollment';
import { enqueueJourneyMessage, type JourneyMessageOutcome } from '../services/acceptance/journey-message';

/**
 * Queues a message node's message; a skip it decides is written down (journey_skips) before the activity
 * answers, so the contact's journey, the enrollment list and the automation's stats show it, not only the
 * workflow's Temporal history. `not_active` is not a skipped step: the enrollment or its automation
 * already ended, and that end is what the contact's journey shows.
 */
async function enqueueOrRecordSkip(db: Sequelize, workspaceId: string, enrollmentId: string, nodeId: string, nowIso: string): Promise<JourneyMessageOutcome> {
  const outcome = await enqueueJourneyMessage(db, workspaceId, enrollmentId, nodeId, nowIso);
  if (outcome.state !== 'skipped' || outcome.reason === 'not_active') return outcome;
  const journey = await loadEnrollment(db, workspaceId, enrollmentId);
  const node = journey?.graph.nodes.find((candidate) => candidate.id === nodeId);
  await recordSkip(db, workspaceId, { enrollmentId, nodeId, nodeLabel: node ? nodeLabelOf(node) : nodeId, reason: outcome.reason, at: new Date(nowIso) });
  return outcome;
}

/**
 * The activities of the journey workflow (workflows/journey.ts). They touch only our database, and every
 * one that depends on the time takes it from the workflow (`nowIso`, `atIso`): time-skipping tests run
 * them for real, and the workflow's decisions stay its own.
 */
export function createJourneyActivities(deps: { db: Sequelize }) {
  const { db } = deps;
  return {
    /** The enrollment with the graph and goal of the version pinned when it entered; null when gone. */
    loadJourney: async (workspaceId: string, enrollmentId: string): Promise<LoadedJourney | null> => loadEnrollment(db, workspaceId, enrollmentId),

    /**
     * A new journey's first step: the enrollment loaded and, while it is active, its entry node recorded, in
     * one local activity, so a journey entering costs its workflow one activation (and the worker one call
     * into its sandbox) less than loading and recording apart (docs/benchmarks.md, journeys).
     */
    enterJourney: async (workspaceId: string, enrollmentId: string, atIso: string): Promise<EnteredJourney | null> => {
      const journey = await loadEnrollment(db, workspaceId, enrollmentId);
      if (!journey || journey.status !== 'active') return journey && { ...journey, entered: false };
      const entered = await recordStep(db, workspaceId, enrollmentId, journeyStepOf(nodeById(journey.graph, journey.graph.entry)), new Date(atIso));
      return { ...journey, entered };
    },

    /** Records the node the journey is at; false when another writer ended the enrollment meanwhile. */
    recordJourneyStep: async (workspaceId: string, enrollmentId: string, step: JourneyStep, atIso: string): Promise<boolean> =>
      recordStep(db, workspaceId, enrollmentId, step, new Date(atIso)),

    enqueueJourneyMessage: async (workspaceId: string, enrollmentId: string, nodeId: string, nowIso: string) =>
      enqueueOrRecordSkip(db, workspaceId, enrollmentId, nodeId, nowIso),

    /** The next `atLocalTime` at or after `afterIso` in the contact's zone (its attribute, else the workspace's). */
    localTimeAfter: async (workspaceId: string, contactId: string, atLocalTime: string, afterIso: string): Promise<string> => {
      const settings = await readJourneySettings(db, workspaceId);
      const contact = await findJourneyContact(db, workspaceId, contactId);
      return nextLocalTime(new Date(afterIso), contactTimeZone(settings, contact?.attributes ?? {}), atLocalTime).toISOString();
    },

    /** Whether the contact matches the branch's AudienceRules now (a contact gone matches nothing). */
    evaluateJourneyBranch: async (workspaceId: string, contactId: string, condition: AudienceRules, nowIso?: string): Promise<boolean> => {
      const context = { fields: fieldsByKey(await listCustomFields(db, workspaceId)), now: nowIso ? new Date(nowIso) : new Date() };
      return contactMatchesRules(db, workspaceId, contactId, condition, context);
    },

    /** Ends the enrollment if it is still active; false when another writer ended it first. */
    finishEnrollment: async (workspaceId: string, enrollmentId: string, end: EnrollmentEnd, atIso?: string): Promise<boolean> =>
      finishEnrollment(db, workspaceId, enrollmentId, end, atIso ? new Date(atIso) : new Date()),
  };
}

export type JourneyActivities = ReturnType<typeof createJourneyActivities>;
