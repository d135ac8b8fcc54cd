import { randomUUID } from 'node:crypto';
import { Worker } from '@temporalio/worker';
import type { Activities } from '../../activities';
import type { EnrollPageInput, EnrollPageResult } from '../../activities/automation-enroll';
import type { SweepOptions, SweepReport } from '../../activities/journey-sweeper';
import { automationEnrollWorkflow } from '../../workflows/automation-enroll';
import { journeySweeperWorkflow } from '../../workflows/journey-sweeper';
import { startTimeSkipping, type TimeSkippingEnv } from '../helpers/time-skipping';
import { workflowBundle } from '../../workers/workflow-bundle';

jest.setTimeout(120_000);

let env: TimeSkippingEnv;
beforeAll(async () => {
  env = await startTimeSkipping();
});
afterAll(() => env.close());

async function eventually(check: () => boolean, what: string): Promise<void> {
  for (let attempt = 0; attempt < 400 && !check(); attempt += 1) await new Promise((resolve) => setTimeout(resolve, 25));
  if (!check()) throw new Error(`never: ${what}`);
}

/** An audience of `size` contacts with ids "c0000".."c<size-1>", paged as the real activity pages it (by id after the cursor). */
function fakeAudience(size: number) {
  const ids = Array.from({ length: size }, (_, i) => `c${String(i).padStart(4, '0')}`);
  const pages: EnrollPageInput[] = [];
  const enrolled = new Set<string>();
  const activities = {
    enrollAudiencePage: async (input: EnrollPageInput): Promise<EnrollPageResult> => {
      pages.push(input);
      const page = ids.filter((id) => input.cursor === null || id > input.cursor).slice(0, input.limit);
      for (const id of page) enrolled.add(id);
      return { state: page.length < input.limit ? 'done' : 'more', cursor: page.at(-1) ?? input.cursor, enrolled: page.length };
    },
  } satisfies Pick<Activities, 'enrollAudiencePage'>;
  return { pages, enrolled, activities };
}

describe('automation enroll workflow', () => {
  it('pages through the audience by cursor and answers how many it enrolled', async () => {
    const audience = fakeAudience(7);
    const taskQueue = `enroll-${randomUUID()}`;
    const worker = await Worker.create({ connection: env.nativeConnection, taskQueue, workflowBundle: await workflowBundle(), activities: audience.activities });
    const input = { workspaceId: randomUUID(), automationId: randomUUID(), requestId: randomUUID(), audience: { listId: randomUUID() }, pageSize: 3 };
    const enrolled = await worker.runUntil(env.workflowClient.execute(automationEnrollWorkflow, { taskQueue, workflowId: `enroll-${randomUUID()}`, args: [input] }));
    expect(enrolled).toBe(7);
    expect(audience.pages.map((page) => page.cursor)).toEqual([null, 'c0002', 'c0005']);
    expect(audience.enrolled.size).toBe(7);
  });

  it('a long audience continues as new every 50 pages, carrying its cursor and count, and enrolls each contact once', async () => {
    const audience = fakeAudience(120);
    const taskQueue = `enroll-${randomUUID()}`;
    const worker = await Worker.create({ connection: env.nativeConnection, taskQueue, workflowBundle: await workflowBundle(), activities: audience.activities });
    const input = { workspaceId: randomUUID(), automationId: randomUUID(), requestId: randomUUID(), audience: { contactIds: [] }, pageSize: 1 };
    const handle = await env.workflowClient.start(automationEnrollWorkflow, { taskQueue, workflowId: `enroll-${randomUUID()}`, args: [input] });
    const enrolled = await worker.runUntil(handle.result());
    expect(enrolled).toBe(120);
    expect(audience.pages).toHaveLength(121);
    expect(new Set(audience.pages.map((page) => page.cursor)).size).toBe(121);
    const firstRun = await env.workflowClient.getHandle(handle.workflowId, handle.firstExecutionRunId).describe();
    expect(firstRun.status.name).toBe('CONTINUED_AS_NEW');
  });

  it('stops at the first page that finds the automation no longer active', async () => {
    const pages: EnrollPageInput[] = [];
    const activities = {
      enrollAudiencePage: async (input: EnrollPageInput): Promise<EnrollPageResult> => {
        pages.push(input);
        return pages.length === 1 ? { state: 'more', cursor: 'c1', enrolled: 500 } : { state: 'stopped', cursor: input.cursor, enrolled: 0 };
      },
    } satisfies Pick<Activities, 'enrollAudiencePage'>;
    const taskQueue = `enroll-${randomUUID()}`;
    const worker = await Worker.create({ connection: env.nativeConnection, taskQueue, workflowBundle: await workflowBundle(), activities });
    const input = { workspaceId: randomUUID(), automationId: randomUUID(), requestId: randomUUID(), audience: { segmentId: randomUUID() } };
    expect(await worker.runUntil(env.workflowClient.execute(automationEnrollWorkflow, { taskQueue, workflowId: `enroll-${randomUUID()}`, args: [input] }))).toBe(500);
    expect(pages).toHaveLength(2);
  });
});

describe('journey sweeper workflow', () => {
  it('goes again at once after a full round, and waits its interval after one that was not', async () => {
    const rounds: SweepOptions[] = [];
    const reports: SweepReport[] = [
      { unstarted: 10, started: 10, unprocessed: 0, processed: 0 },
      { unstarted: 0, started: 0, unprocessed: 10, processed: 10 },
    ];
    const activities = {
      sweepJourneys: async (options: SweepOptions): Promise<SweepReport> => {
        rounds.push(options);
        return reports.shift() ?? { unstarted: 0, started: 0, unprocessed: 0, processed: 0 };
      },
    } satisfies Pick<Activities, 'sweepJourneys'>;
    const taskQueue = `sweeper-${randomUUID()}`;
    const worker = await Worker.create({ connection: env.nativeConnection, taskQueue, workflowBundle: await workflowBundle(), activities });
    const handle = await env.workflowClient.start(journeySweeperWorkflow, { taskQueue, workflowId: `sweeper-${randomUUID()}`, args: [{ limit: 10, olderThanMs: 30_000, intervalMs: 15_000 }] });
    await worker.runUntil(async () => {
      await eventually(() => rounds.length >= 3, 'three rounds');
      // Two full rounds and a quiet one, then the interval: no fourth round until 15 s pass.
      await new Promise((resolve) => setTimeout(resolve, 300));
      expect(rounds).toHaveLength(3);
      await env.sleep(15_000);
      await eventually(() => rounds.length >= 4, 'a round after the interval');
      await handle.terminate('test over');
    });
    expect(rounds[0]).toEqual({ olderThanMs: 30_000, limit: 10 });
  });
});
