import { randomUUID } from 'node:crypto';
import { Worker } from '@temporalio/worker';
import type { Activities } from '../../activities';
import type { JourneyMessageOutcome } from '../../services/acceptance/journey-message';
import type { EventMatch, JourneyGraph, JourneyNode } from '../../core/journeys/graph';
import type { EnteredJourney, JourneyStep, LoadedJourney } from '../../db/repositories/journey-progress';
import { journeyWorkflow } from '../../workflows/journey';
import type { EnrollmentEnd } from '../../core/journeys/enrollment';
import { exitEnrollmentSignal, journeyEventSignal } from '../../workflows/journey-signals';
import { startTimeSkipping, type TimeSkippingEnv } from '../helpers/time-skipping';
import { workflowBundle } from '../../workers/workflow-bundle';

const HOUR = 60 * 60_000;
const DAY = 24 * HOUR;

jest.setTimeout(120_000);

async function eventually(check: () => boolean, what: string): Promise<void> {
  for (let attempt = 0; attempt < 400 && !check(); attempt += 1) await new Promise((resolve) => setTimeout(resolve, 25));
  if (!check()) throw new Error(`never: ${what}`);
}

const message = (id: string, next: string | null): JourneyNode => ({
  id, type: 'message', preferredChannel: 'email', fallbackChain: [], templateByChannel: { email: randomUUID() }, attachmentIds: [], next,
});
const wait = (id: string, durationMs: number, next: string | null): JourneyNode => ({ id, type: 'wait', durationMs, next });

/**
 * One enrollment as the journey's activities see the database, in memory: the version it is pinned to,
 * the steps recorded, the messages queued (by node, at the workflow's clock), and how it ended. A node
 * queued twice is a message sent twice.
 */
class FakeEnrollment {
  status: LoadedJourney['status'] = 'active';
  readonly steps: string[] = [];
  readonly queued = new Map<string, number>();
  readonly duplicates: string[] = [];
  readonly ends: EnrollmentEnd[] = [];
  /** What the next asks for a node answer before it is queued (deferrals, holds). */
  readonly before = new Map<string, JourneyMessageOutcome[]>();
  readonly asked: Array<{ nodeId: string; at: number }> = [];
  branch = false;
  triggerEventId: string | null = null;

  constructor(
    readonly graph: JourneyGraph,
    readonly goal: EventMatch | null = null,
  ) {}

  /** The enrollment is ended by another writer (an exit through the API) between its load and its first step. */
  endsBeforeFirstStep = false;

  endElsewhere(): false {
    this.endsBeforeFirstStep = false;
    this.status = 'exited';
    return false;
  }

  loaded(): LoadedJourney {
    return { automationId: 'a', versionId: 'v', contactId: 'c', status: this.status, triggerEventId: this.triggerEventId, graph: this.graph, goal: this.goal };
  }

  activities() {
    return {
      loadJourney: async (): Promise<LoadedJourney | null> => this.loaded(),
      recordJourneyStep: async (_workspaceId: string, _enrollmentId: string, step: JourneyStep): Promise<boolean> => {
        if (this.endsBeforeFirstStep) return this.endElsewhere();
        this.steps.push(step.nodeId);
        return this.status === 'active';
      },
      enterJourney: async (): Promise<EnteredJourney | null> => {
        const journey = this.loaded();
        if (journey.status !== 'active') return { ...journey, entered: false };
        if (this.endsBeforeFirstStep) return { ...journey, entered: this.endElsewhere() };
        this.steps.push(this.graph.entry);
        return { ...journey, entered: true };
      },
      enqueueJourneyMessage: async (_workspaceId: string, _enrollmentId: string, nodeId: string, nowIso: string): Promise<JourneyMessageOutcome> => {
        this.asked.push({ nodeId, at: Date.parse(nowIso) });
        const pending = this.before.get(nodeId)?.shift();
        if (pending) return pending;
        if (this.queued.has(nodeId)) this.duplicates.push(nodeId);
        this.queued.set(nodeId, Date.parse(nowIso));
        return { state: 'queued', messageId: nodeId, channel: 'email' };
      },
      localTimeAfter: async (_workspaceId: string, _contactId: string, _at: string, afterIso: string): Promise<string> =>
        new Date(Date.parse(afterIso) + HOUR).toISOString(),
      evaluateJourneyBranch: async (): Promise<boolean> => this.branch,
      finishEnrollment: async (_workspaceId: string, _enrollmentId: string, end: EnrollmentEnd): Promise<boolean> => {
        this.ends.push(end);
        this.status = end.status;
        return true;
      },
    } satisfies Partial<Activities>;
  }

  expectEachMessageOnce(nodes: string[]): void {
    expect(this.duplicates).toEqual([]);
    expect([...this.queued.keys()].sort()).toEqual([...nodes].sort());
  }
}

const THREE_STEPS: JourneyGraph = {
  entry: 'welcome',
  nodes: [message('welcome', 'two-days'), wait('two-days', 2 * DAY, 'tips'), message('tips', 'three-days'), wait('three-days', 3 * DAY, 'offer'), message('offer', null)],
};

describe('journey workflow', () => {
  let env: TimeSkippingEnv;
  beforeAll(async () => {
    env = await startTimeSkipping();
  });
  afterAll(() => env.close());

  // Each test its own task queue: a test that fails leaves no worker in the way of the next.
  let taskQueue = '';
  beforeEach(() => {
    taskQueue = `${env.taskQueue}-${randomUUID()}`;
  });

  const workerFor = async (enrollment: FakeEnrollment, options: { maxCachedWorkflows?: number } = {}) =>
    Worker.create({
      connection: env.nativeConnection, taskQueue, workflowBundle: await workflowBundle(), activities: enrollment.activities(), ...options,
    });

  /** As temporal/journeys.ts starts a journey, or (`startedBefore33`) as journeys were started before issue 33. */
  const start = (startedBefore33 = false) => {
    const enrollmentId = randomUUID();
    const input = { workspaceId: randomUUID(), enrollmentId, ...(!startedBefore33 && { enter: 'at-once' as const }) };
    return env.workflowClient.start(journeyWorkflow, { taskQueue, workflowId: `enrollment:${enrollmentId}`, args: [input] });
  };

  it('a 3-step journey with waits of days completes in seconds, each message at its day', async () => {
    const enrollment = new FakeEnrollment(THREE_STEPS);
    const worker = await workerFor(enrollment);
    const wallStart = Date.now();
    await worker.runUntil(async () => {
      const handle = await start();
      expect(await handle.result()).toEqual({ status: 'completed', reason: 'completed' });
      // A small history: 75 events for these five nodes (each its step, its activity or timer, their workflow tasks).
      const history = await handle.fetchHistory();
      expect(history.events?.length ?? 0).toBeLessThan(90);
    });
    expect(Date.now() - wallStart).toBeLessThan(30_000);
    enrollment.expectEachMessageOnce(['welcome', 'tips', 'offer']);
    const first = enrollment.queued.get('welcome') ?? 0;
    expect((enrollment.queued.get('tips') ?? 0) - first).toBeGreaterThanOrEqual(2 * DAY);
    expect((enrollment.queued.get('tips') ?? 0) - first).toBeLessThan(2 * DAY + HOUR);
    expect((enrollment.queued.get('offer') ?? 0) - first).toBeGreaterThanOrEqual(5 * DAY);
    expect(enrollment.steps).toEqual(['welcome', 'two-days', 'tips', 'three-days', 'offer']);
    expect(enrollment.ends).toEqual([{ status: 'completed', reason: 'completed' }]);
  });

  it('a new journey loads and records its entry node in one local activity; one started before issue 33 still takes two', async () => {
    const enrollment = new FakeEnrollment({ entry: 'month', nodes: [wait('month', 30 * DAY, 'hello'), message('hello', null)] });
    const worker = await workerFor(enrollment);
    /** The local activities of a journey's first workflow task, up to the timer of its wait. */
    const enteringSteps = async (handle: Awaited<ReturnType<typeof start>>) => {
      let events = (await handle.fetchHistory()).events ?? [];
      for (let attempt = 0; attempt < 200 && !events.some((event) => event.timerStartedEventAttributes); attempt += 1) {
        await new Promise((resolve) => setTimeout(resolve, 25));
        events = (await handle.fetchHistory()).events ?? [];
      }
      const beforeTimer = events.slice(0, events.findIndex((event) => event.timerStartedEventAttributes));
      expect(beforeTimer.filter((event) => event.workflowTaskCompletedEventAttributes)).toHaveLength(1);
      return beforeTimer.filter((event) => event.markerRecordedEventAttributes?.markerName === 'core_local_activity').length;
    };
    await worker.runUntil(async () => {
      const journeys = [await start(), await start(true)];
      expect(await enteringSteps(journeys[0])).toBe(1);
      expect(await enteringSteps(journeys[1])).toBe(2);
      for (const handle of journeys) await handle.signal(exitEnrollmentSignal, { reason: 'manual' });
      for (const handle of journeys) expect(await handle.result()).toEqual({ status: 'exited', reason: 'manual' });
    });
    expect(enrollment.steps).toEqual(['month', 'month']);
  });

  it('an enrollment ended elsewhere as its journey enters records no step, sends nothing and is not finished again', async () => {
    const enrollment = new FakeEnrollment(THREE_STEPS);
    enrollment.endsBeforeFirstStep = true;
    const worker = await workerFor(enrollment);
    await worker.runUntil(async () => {
      expect(await (await start()).result()).toEqual({ status: 'exited', reason: 'manual' });
    });
    expect(enrollment.steps).toEqual([]);
    expect(enrollment.ends).toEqual([]);
    enrollment.expectEachMessageOnce([]);
  });

  it('an event matched to the goal mid-wait exits with goal_reached and no later message; one that matched nothing changes nothing', async () => {
    const enrollment = new FakeEnrollment(THREE_STEPS, { event: 'order.placed', match: { plan: 'pro' } });
    const worker = await workerFor(enrollment);
    await worker.runUntil(async () => {
      const handle = await start();
      await eventually(() => enrollment.steps.includes('two-days'), 'the journey waiting its two days');
      await handle.signal(journeyEventSignal, { eventId: randomUUID(), name: 'order.placed', matched: { goal: false, nodeIds: [] }, occurredAt: new Date().toISOString() });
      await handle.signal(journeyEventSignal, { eventId: randomUUID(), name: 'order.placed', matched: { goal: true, nodeIds: [] }, occurredAt: new Date().toISOString() });
      expect(await handle.result()).toEqual({ status: 'exited', reason: 'goal_reached' });
    });
    enrollment.expectEachMessageOnce(['welcome']);
    expect(enrollment.ends).toEqual([{ status: 'exited', reason: 'goal_reached' }]);
  });

  it('started with its trigger event (signalWithStart): the trigger is not the goal, but another goal event that came with it is', async () => {
    const goal = { event: 'order.placed', match: {} };
    const triggered = new FakeEnrollment(THREE_STEPS, goal);
    triggered.triggerEventId = randomUUID();
    const reached = new FakeEnrollment(THREE_STEPS, goal);
    reached.triggerEventId = randomUUID();
    const signalWithStart = (eventId: string) => {
      const enrollmentId = randomUUID();
      return env.workflowClient.signalWithStart(journeyWorkflow, {
        taskQueue, workflowId: `enrollment:${enrollmentId}`, args: [{ workspaceId: randomUUID(), enrollmentId, enter: 'at-once' }],
        signal: journeyEventSignal, signalArgs: [{ eventId, name: 'order.placed', matched: { goal: true, nodeIds: [] }, occurredAt: new Date().toISOString() }],
      });
    };
    await (await workerFor(triggered)).runUntil(async () => {
      const handle = await signalWithStart(triggered.triggerEventId ?? '');
      await eventually(() => triggered.steps.includes('two-days'), 'the journey under way');
      await handle.signal(exitEnrollmentSignal, { reason: 'archived' });
      expect(await handle.result()).toEqual({ status: 'exited', reason: 'archived' });
    });
    triggered.expectEachMessageOnce(['welcome']);

    await (await workerFor(reached)).runUntil(async () => {
      expect(await (await signalWithStart(randomUUID())).result()).toEqual({ status: 'exited', reason: 'goal_reached' });
    });
    reached.expectEachMessageOnce([]);
  });

  it('an exit asked for through the API ends the wait at once with its reason', async () => {
    const enrollment = new FakeEnrollment(THREE_STEPS);
    const worker = await workerFor(enrollment);
    await worker.runUntil(async () => {
      const handle = await start();
      await eventually(() => enrollment.steps.includes('two-days'), 'the journey waiting');
      await handle.signal(exitEnrollmentSignal, { reason: 'manual' });
      expect(await handle.result()).toEqual({ status: 'exited', reason: 'manual' });
    });
    enrollment.expectEachMessageOnce(['welcome']);
  });

  it('a signal of the shape recorded before signals carried ids only (properties, no verdict) is still matched against the goal', async () => {
    const enrollment = new FakeEnrollment(THREE_STEPS, { event: 'order.placed', match: { plan: 'pro' } });
    const worker = await workerFor(enrollment);
    await worker.runUntil(async () => {
      const handle = await start();
      await eventually(() => enrollment.steps.includes('two-days'), 'the journey waiting its two days');
      await handle.signal(journeyEventSignal, { eventId: randomUUID(), name: 'order.placed', properties: { plan: 'free' }, occurredAt: new Date().toISOString() });
      await handle.signal(journeyEventSignal, { eventId: randomUUID(), name: 'order.placed', properties: { plan: 'pro' }, occurredAt: new Date().toISOString() });
      expect(await handle.result()).toEqual({ status: 'exited', reason: 'goal_reached' });
    });
    enrollment.expectEachMessageOnce(['welcome']);
  });

  const WAIT_FOR_CLICK: JourneyGraph = {
    entry: 'hello',
    nodes: [
      message('hello', 'pause'),
      wait('pause', HOUR, 'click'),
      { id: 'click', type: 'wait_for_event', event: 'link.clicked', match: {}, timeoutMs: 3 * DAY, onEvent: 'thanks', onTimeout: 'reminder' },
      message('thanks', null),
      message('reminder', null),
    ],
  };

  it('wait_for_event takes onEvent when the event arrives while it waits', async () => {
    const enrollment = new FakeEnrollment(WAIT_FOR_CLICK);
    const worker = await workerFor(enrollment);
    await worker.runUntil(async () => {
      const handle = await start();
      await eventually(() => enrollment.steps.includes('pause'), 'the journey in the wait before');
      // Time skips only while a result is awaited: move the clock past the hour's wait by hand.
      await env.sleep(2 * HOUR);
      await eventually(() => enrollment.steps.includes('click'), 'the journey at the wait_for_event');
      await handle.signal(journeyEventSignal, { eventId: randomUUID(), name: 'link.clicked', matched: { goal: false, nodeIds: ['click'] }, occurredAt: new Date().toISOString() });
      expect(await handle.result()).toEqual({ status: 'completed', reason: 'completed' });
    });
    enrollment.expectEachMessageOnce(['hello', 'thanks']);
    // The event ended the wait, not its three-day timeout.
    expect((enrollment.queued.get('thanks') ?? 0) - (enrollment.queued.get('hello') ?? 0)).toBeLessThan(DAY);
  });

  it('wait_for_event takes onTimeout when no event comes, and an event from before the node was entered does not count', async () => {
    const enrollment = new FakeEnrollment(WAIT_FOR_CLICK);
    const worker = await workerFor(enrollment);
    await worker.runUntil(async () => {
      const handle = await start();
      await eventually(() => enrollment.steps.includes('pause'), 'the journey in the wait before');
      await handle.signal(journeyEventSignal, { eventId: randomUUID(), name: 'link.clicked', matched: { goal: false, nodeIds: ['click'] }, occurredAt: new Date().toISOString() });
      expect(await handle.result()).toEqual({ status: 'completed', reason: 'completed' });
    });
    enrollment.expectEachMessageOnce(['hello', 'reminder']);
    expect((enrollment.queued.get('reminder') ?? 0) - (enrollment.queued.get('hello') ?? 0)).toBeGreaterThanOrEqual(3 * DAY + HOUR);
  });

  it('wait_for_event is ended only by an event matched to its own node: one matched to another node leaves it to time out', async () => {
    const enrollment = new FakeEnrollment(WAIT_FOR_CLICK);
    const worker = await workerFor(enrollment);
    await worker.runUntil(async () => {
      const handle = await start();
      await eventually(() => enrollment.steps.includes('pause'), 'the journey in the wait before');
      await env.sleep(2 * HOUR);
      await eventually(() => enrollment.steps.includes('click'), 'the journey at the wait_for_event');
      await handle.signal(journeyEventSignal, { eventId: randomUUID(), name: 'link.clicked', matched: { goal: false, nodeIds: ['elsewhere'] }, occurredAt: new Date().toISOString() });
      expect(await handle.result()).toEqual({ status: 'completed', reason: 'completed' });
    });
    enrollment.expectEachMessageOnce(['hello', 'reminder']);
  });

  it('an event delivered twice (a retried signal, the sweeper) is counted once', async () => {
    const click = (id: string, onEvent: string): JourneyNode => ({ id, type: 'wait_for_event', event: 'link.clicked', match: {}, timeoutMs: DAY, onEvent, onTimeout: 'timed-out' });
    const enrollment = new FakeEnrollment({
      entry: 'first',
      nodes: [click('first', 'second'), click('second', 'twice'), message('twice', null), message('timed-out', null)],
    });
    const worker = await workerFor(enrollment);
    await worker.runUntil(async () => {
      const handle = await start();
      await eventually(() => enrollment.steps.includes('first'), 'the journey at its first wait');
      const event = { eventId: randomUUID(), name: 'link.clicked', matched: { goal: false, nodeIds: ['first', 'second'] }, occurredAt: new Date().toISOString() };
      await handle.signal(journeyEventSignal, event);
      await eventually(() => enrollment.steps.includes('second'), 'the journey at its second wait');
      await handle.signal(journeyEventSignal, event);
      expect(await handle.result()).toEqual({ status: 'completed', reason: 'completed' });
    });
    enrollment.expectEachMessageOnce(['timed-out']);
  });

  it('the events already counted go along when the journey continues as new: one delivered again after it is still ignored', async () => {
    const chain: JourneyNode[] = Array.from({ length: 100 }, (_, i) => message(`m${i}`, i < 99 ? `m${i + 1}` : 'last'));
    const enrollment = new FakeEnrollment({
      entry: 'first',
      nodes: [
        { id: 'first', type: 'wait_for_event', event: 'link.clicked', match: {}, timeoutMs: DAY, onEvent: 'm0', onTimeout: null },
        ...chain,
        { id: 'last', type: 'wait_for_event', event: 'link.clicked', match: {}, timeoutMs: DAY, onEvent: 'twice', onTimeout: 'timed-out' },
        message('twice', null),
        message('timed-out', null),
      ],
    });
    const worker = await workerFor(enrollment);
    await worker.runUntil(async () => {
      const handle = await start();
      await eventually(() => enrollment.steps.includes('first'), 'the journey at its first wait');
      const event = { eventId: randomUUID(), name: 'link.clicked', matched: { goal: false, nodeIds: ['first', 'last'] }, occurredAt: new Date().toISOString() };
      await handle.signal(journeyEventSignal, event);
      await eventually(() => enrollment.steps.includes('last'), 'the journey at its last wait, in its second run');
      const described = await env.workflowClient.getHandle(handle.workflowId).describe();
      expect(described.runId).not.toBe(handle.firstExecutionRunId);
      await handle.signal(journeyEventSignal, event);
      expect(await env.workflowClient.getHandle(handle.workflowId).result()).toEqual({ status: 'completed', reason: 'completed' });
    });
    expect(enrollment.queued.has('twice')).toBe(false);
    expect(enrollment.queued.has('timed-out')).toBe(true);
  });

  it('a message deferred by quiet hours is queued at the moment the activity named, not before', async () => {
    const enrollment = new FakeEnrollment({ entry: 'hello', nodes: [message('hello', null)] });
    // The test server's clock, which earlier tests moved on.
    const until = (await env.now()).getTime() + 10 * DAY + 11 * HOUR;
    enrollment.before.set('hello', [{ state: 'deferred', until: new Date(until).toISOString(), reason: 'quiet_hours' }]);
    const worker = await workerFor(enrollment);
    await worker.runUntil(async () => {
      const handle = await start();
      expect(await handle.result()).toEqual({ status: 'completed', reason: 'completed' });
    });
    enrollment.expectEachMessageOnce(['hello']);
    expect(enrollment.asked).toHaveLength(2);
    expect(enrollment.queued.get('hello')).toBeGreaterThanOrEqual(until);
    expect(enrollment.queued.get('hello')).toBeLessThan(until + 5_000);
  });

  it('a message held by a paused automation asks again every 5 minutes until it may go', async () => {
    const enrollment = new FakeEnrollment({ entry: 'hello', nodes: [message('hello', null)] });
    enrollment.before.set('hello', [{ state: 'held' }, { state: 'held' }]);
    const worker = await workerFor(enrollment);
    await worker.runUntil(async () => {
      expect(await (await start()).result()).toEqual({ status: 'completed', reason: 'completed' });
    });
    const times = enrollment.asked.map((ask) => ask.at);
    expect(times).toHaveLength(3);
    expect(times[2] - times[0]).toBeGreaterThanOrEqual(10 * 60_000);
    enrollment.expectEachMessageOnce(['hello']);
  });

  it('a branch goes where the contact matches now, and an exit node ends the journey as exit_node', async () => {
    const enrollment = new FakeEnrollment({
      entry: 'vip',
      nodes: [
        { id: 'vip', type: 'branch', condition: { type: 'group', operator: 'and', rules: [] }, then: 'gift', else: 'bye' },
        message('gift', 'bye'),
        { id: 'bye', type: 'exit' },
      ],
    });
    enrollment.branch = true;
    const worker = await workerFor(enrollment);
    await worker.runUntil(async () => {
      expect(await (await start()).result()).toEqual({ status: 'completed', reason: 'exit_node' });
    });
    enrollment.expectEachMessageOnce(['gift']);
    expect(enrollment.ends).toEqual([{ status: 'completed', reason: 'exit_node' }]);
  });

  it('an enrollment that is gone or no longer active ends not_found without writing', async () => {
    const enrollment = new FakeEnrollment(THREE_STEPS);
    enrollment.status = 'exited';
    const worker = await workerFor(enrollment);
    await worker.runUntil(async () => {
      expect(await (await start()).result()).toEqual({ status: 'exited', reason: 'not_found' });
    });
    expect(enrollment.steps).toEqual([]);
    expect(enrollment.ends).toEqual([]);
  });

  it('a worker restart mid-journey resumes where it was: the journey completes with each message once', async () => {
    const enrollment = new FakeEnrollment(THREE_STEPS);
    // No workflow cache, so no sticky queue: the new worker gets the workflow's tasks and replays its history.
    const before = await workerFor(enrollment, { maxCachedWorkflows: 0 });
    const running = before.run();
    const handle = await start();
    await eventually(() => enrollment.steps.includes('two-days'), 'the journey in its two-day wait');
    before.shutdown();
    await running;
    expect([...enrollment.queued.keys()]).toEqual(['welcome']);

    const after = await workerFor(enrollment);
    await after.runUntil(async () => {
      expect(await handle.result()).toEqual({ status: 'completed', reason: 'completed' });
    });
    enrollment.expectEachMessageOnce(['welcome', 'tips', 'offer']);
    expect(enrollment.steps).toEqual(['welcome', 'two-days', 'tips', 'three-days', 'offer']);
  });

  it('a long journey continues as new every 100 nodes and keeps its position: every node once, in order', async () => {
    const nodes: JourneyNode[] = Array.from({ length: 250 }, (_, i) => message(`m${i}`, i < 249 ? `m${i + 1}` : null));
    const enrollment = new FakeEnrollment({ entry: 'm0', nodes }, { event: 'goal', match: {} });
    const worker = await workerFor(enrollment);
    await worker.runUntil(async () => {
      const handle = await start();
      expect(await handle.result()).toEqual({ status: 'completed', reason: 'completed' });
      const history = await env.workflowClient.getHandle(handle.workflowId).fetchHistory();
      // The last run holds only its own 50 nodes (a dozen events each), not the whole journey's 250.
      expect(history.events?.length ?? 0).toBeLessThan(50 * 15);
      const described = await env.workflowClient.getHandle(handle.workflowId).describe();
      expect(described.runId).not.toBe(handle.firstExecutionRunId);
    });
    enrollment.expectEachMessageOnce(nodes.map((node) => node.id));
    expect(enrollment.steps).toEqual(nodes.map((node) => node.id));
  });
});
