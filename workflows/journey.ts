import { condition, continueAsNew, log, proxyLocalActivities, setHandler, workflowInfo } from '@temporalio/workflow';
import type { Activities } from '../activities';
import { journeyStepOf, type JourneyNode, matchesEvent, type MessageNode, nodeById, type WaitForEventNode, type WaitNode } from '../core/journeys/graph';
import type { EnrollmentEnd, JourneyEvent } from '../core/journeys/enrollment';
import { exitEnrollmentSignal, journeyEventSignal, type JourneyWorkflowInput } from './journey-signals';

/**
 * Every step of a journey is a short statement or two against our own database, so they run as local
 * activities: in the worker that runs the journey, recorded as one marker each in its history, with no
 * round trip through the Temporal server per step. That is what lets one worker move thousands of
 * journeys a second past their steps (docs/benchmarks.md). Retried without limit, like the send
 * workflow's: the database comes back, and a journey that gave up would leave its enrollment active for ever.
 */
const internal = proxyLocalActivities<Activities>({
  startToCloseTimeout: '1 minute',
  retry: { initialInterval: '1 second', maximumInterval: '1 minute' },
});

/** How many event ids a journey remembers to count a redelivered signal once. */
const SEEN_EVENTS = 100;
/** Nodes run before the journey continues as new, so its history stays small however long it is. */
const NODES_PER_RUN = 100;
/** How often a message held by a paused automation asks again. */
const HOLD_RECHECK_MS = 5 * 60_000;
/** The shortest timer a deferred message takes (a moment already past is asked again after this). */
const MIN_TIMER_MS = 1_000;

type Loaded = NonNullable<Awaited<ReturnType<Activities['loadJourney']>>>;

const nowIso = (): string => new Date(Date.now()).toISOString();

/**
 * Whether an event reaches the journey's goal, or ends the wait_for_event node it waits at: the verdict
 * the signal carries (matched where the event is stored, so no property enters the history). A signal
 * recorded before that carries the properties instead, and is matched here as it was then.
 */
const reachesGoal = (journey: Loaded, event: JourneyEvent): boolean =>
  event.matched ? event.matched.goal : journey.goal !== null && event.properties !== undefined && matchesEvent(journey.goal, { name: event.name, properties: event.properties });

const endsWait = (node: WaitForEventNode, event: JourneyEvent): boolean =>
  event.matched ? event.matched.nodeIds.includes(node.id) : event.properties !== undefined && matchesEvent(node, { name: event.name, properties: event.properties });

/**
 * The journey of one enrollment, `enrollment:<enrollmentId>` (docs/journeys.md): it interprets the graph
 * of the version pinned when the contact entered, node by node, recording where the contact is, until
 * the graph ends, an exit node, the automation's goal, or an exit asked for through the API. Events of
 * the contact arrive as signals: a goal match ends the journey wherever it is; a match of the
 * wait_for_event node the journey is waiting at now takes its onEvent branch (events from before the node
 * was entered do not count). Every moment it decides by is its own clock, which it also hands to the
 * activities that depend on time (quiet hours, caps, local times).
 */
export async function journeyWorkflow(input: JourneyWorkflowInput): Promise<EnrollmentEnd> {
  const { workspaceId, enrollmentId } = input;
  const seen: string[] = [...(input.position?.seenEventIds ?? [])];
  let journey: Loaded | null = null;
  let stop: EnrollmentEnd | null = null;
  let waitingFor: WaitForEventNode | null = null;
  let eventArrived = false;
  /** Events that came before the journey was loaded (the trigger's signalWithStart among them). */
  const early: JourneyEvent[] = [];

  setHandler(journeyEventSignal, (event: JourneyEvent) => {
    if (seen.includes(event.eventId)) return;
    seen.push(event.eventId);
    if (seen.length > SEEN_EVENTS) seen.splice(0, seen.length - SEEN_EVENTS);
    if (!journey) {
      early.push(event);
      return;
    }
    if (stop) return;
    if (reachesGoal(journey, event)) stop = { status: 'exited', reason: 'goal_reached' };
    else if (waitingFor && endsWait(waitingFor, event)) eventArrived = true;
  });
  setHandler(exitEnrollmentSignal, ({ reason }) => {
    stop ??= { status: 'exited', reason };
  });

  // Asked for by its start (see JourneyWorkflowInput.enter); a run continued as new resumes at its position.
  const entering = input.enter === 'at-once' && input.position === undefined;
  const loaded = entering ? await internal.enterJourney(workspaceId, enrollmentId, nowIso()) : await internal.loadJourney(workspaceId, enrollmentId);
  if (!loaded || loaded.status !== 'active') return { status: 'exited', reason: 'not_found' };
  if (entering && !('entered' in loaded && loaded.entered)) {
    log.info('journey ended elsewhere', { workspaceId, enrollmentId, nodeId: loaded.graph.entry });
    return stop ?? { status: 'exited', reason: 'manual' };
  }
  journey = loaded;
  // An event that came while the journey loaded may be its goal; the event that enrolled the contact is not.
  if (early.some((event) => event.eventId !== loaded.triggerEventId && reachesGoal(loaded, event))) stop ??= { status: 'exited', reason: 'goal_reached' };
  const stopped = (): boolean => stop !== null;

  const finish = async (end: EnrollmentEnd): Promise<EnrollmentEnd> => {
    await internal.finishEnrollment(workspaceId, enrollmentId, end, nowIso());
    log.info('journey ended', { workspaceId, enrollmentId, status: end.status, reason: end.reason });
    return end;
  };

  const carryOn = (nodeId: string): Promise<never> =>
    continueAsNew<typeof journeyWorkflow>({ workspaceId, enrollmentId, position: { nodeId, seenEventIds: seen } });

  /** Sleeps until `at` (epoch ms) unless the journey is stopped first; true when it was. */
  const sleepUntil = (at: number): Promise<boolean> => {
    const ms = at - Date.now();
    return ms > 0 ? condition(stopped, ms) : Promise.resolve(stopped());
  };

  /** A message node: queued or skipped moves on; deferred and held wait, then ask again. */
  const runMessage = async (node: MessageNode): Promise<void> => {
    for (;;) {
      const outcome = await internal.enqueueJourneyMessage(workspaceId, enrollmentId, node.id, nowIso());
      log.info('journey message', { workspaceId, enrollmentId, nodeId: node.id, state: outcome.state, ...('reason' in outcome && { reason: outcome.reason }) });
      if (outcome.state === 'queued' || outcome.state === 'skipped') return;
      const wait = outcome.state === 'deferred' ? Math.max(MIN_TIMER_MS, Date.parse(outcome.until) - Date.now()) : HOLD_RECHECK_MS;
      if (await condition(stopped, wait)) return;
      // A long hold (a paused automation) must not grow the history without bound: ask again in a new run.
      if (workflowInfo().continueAsNewSuggested) await carryOn(node.id);
    }
  };

  const runWait = async (node: WaitNode): Promise<void> => {
    if (node.durationMs !== undefined && (await sleepUntil(Date.now() + node.durationMs))) return;
    if (node.until !== undefined && (await sleepUntil(Date.parse(node.until)))) return;
    if (node.atLocalTime !== undefined) {
      const at = await internal.localTimeAfter(workspaceId, loaded.contactId, node.atLocalTime, nowIso());
      await sleepUntil(Date.parse(at));
    }
  };

  const next = async (node: JourneyNode): Promise<string | null | 'exit'> => {
    switch (node.type) {
      case 'message':
        await runMessage(node);
        return node.next;
      case 'wait':
        await runWait(node);
        return node.next;
      case 'wait_for_event': {
        await condition(() => eventArrived || stopped(), node.timeoutMs);
        const arrived = eventArrived;
        waitingFor = null;
        eventArrived = false;
        return arrived ? node.onEvent : node.onTimeout;
      }
      case 'branch': {
        const matched = await internal.evaluateJourneyBranch(workspaceId, loaded.contactId, node.condition, nowIso());
        return matched ? node.then : node.else;
      }
      case 'exit':
        return 'exit';
    }
  };

  let nodeId: string | null = input.position ? input.position.nodeId : loaded.graph.entry;
  /** The entry node's step, written as the journey entered. */
  let recorded = entering;
  for (let steps = 0; ; steps += 1) {
    if (stop) return finish(stop);
    if (nodeId === null) return finish({ status: 'completed', reason: 'completed' });
    if (steps >= NODES_PER_RUN || workflowInfo().continueAsNewSuggested) await carryOn(nodeId);
    const node = nodeById(loaded.graph, nodeId);
    // Entered now: only events from here on can end a wait_for_event.
    if (node.type === 'wait_for_event') {
      waitingFor = node;
      eventArrived = false;
    }
    if (!recorded && !(await internal.recordJourneyStep(workspaceId, enrollmentId, journeyStepOf(node), nowIso()))) {
      // Another writer ended the enrollment (an exit through the API, an archive): nothing more to write.
      log.info('journey ended elsewhere', { workspaceId, enrollmentId, nodeId });
      return stop ?? { status: 'exited', reason: 'manual' };
    }
    recorded = false;
    const after = await next(node);
    if (stop) return finish(stop);
    if (after === 'exit') return finish({ status: 'completed', reason: 'exit_node' });
    nodeId = after;
  }
}
