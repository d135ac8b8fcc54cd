import { randomUUID } from 'node:crypto';
import { ApplicationFailure } from '@temporalio/common';
import { WorkflowFailedError } from '@temporalio/client';
import { Worker } from '@temporalio/worker';
import type { AnalyticsSyncActivities, SyncPageInput } from '../../activities/analytics-sync';
import type { AnalyticsSyncRequest, SyncWindowTimes } from '../../core/analytics/sync';
import { analyticsSyncWorkflow } from '../../workflows';
import { startTimeSkipping, type TimeSkippingEnv } from '../helpers/time-skipping';
import { workflowBundle } from '../../workers/workflow-bundle';

/** What the fakes saw: the begin calls, every page asked for, the end state recorded. */
interface Trace {
  begun: AnalyticsSyncRequest[];
  pages: SyncPageInput[];
  finished: Array<string | null>;
}

const WINDOW: SyncWindowTimes = { since: '2026-03-01T00:00:00.000Z', until: '2026-03-31T00:00:00.000Z' };

describe('analytics sync workflow', () => {
  let env: TimeSkippingEnv;
  beforeAll(async () => {
    env = await startTimeSkipping();
  });
  afterAll(() => env.close());
  jest.setTimeout(120_000);

  /** Fake activities typed against the real ones; `page` answers each page call (numbered from 0). */
  function fakes(page: (call: number, input: SyncPageInput) => Promise<{ imported: number; nextCursor: string | null }>) {
    const trace: Trace = { begun: [], pages: [], finished: [] };
    const activities = {
      beginAnalyticsSync: async (request: AnalyticsSyncRequest) => {
        trace.begun.push(request);
        return WINDOW;
      },
      syncAnalyticsPage: async (input: SyncPageInput) => {
        trace.pages.push(input);
        return page(trace.pages.length - 1, input);
      },
      finishAnalyticsSync: async (input: { error: string | null }) => {
        trace.finished.push(input.error);
      },
    } satisfies AnalyticsSyncActivities;
    return { trace, activities };
  }

  async function run(activities: AnalyticsSyncActivities) {
    const worker = await Worker.create({ connection: env.nativeConnection, taskQueue: env.taskQueue, workflowBundle: await workflowBundle(), activities });
    const workspaceId = randomUUID();
    return worker.runUntil(
      env.workflowClient
        .execute(analyticsSyncWorkflow, { workflowId: `analytics-sync:${workspaceId}`, taskQueue: env.taskQueue, args: [{ workspaceId, source: { kind: 'matomo' } }] })
        .then((result) => ({ result }), (error: unknown) => ({ error })),
    );
  }

  it('reads page after page with the cursor each one returned, under one window, and sums what each imported', async () => {
    const { trace, activities } = fakes(async (call) => ({ imported: call + 1, nextCursor: call < 2 ? String((call + 1) * 100) : null }));
    expect(await run(activities)).toEqual({ result: { imported: 6 } });
    expect(trace.pages.map((page) => [page.cursor, page.window])).toEqual([[null, WINDOW], ['100', WINDOW], ['200', WINDOW]]);
    expect(trace.begun).toHaveLength(1);
    expect(trace.finished).toEqual([null]);
  });

  it('a long sync continues as new every 200 pages, carrying the window, cursor and count, and begins only once', async () => {
    const { trace, activities } = fakes(async (call) => ({ imported: 1, nextCursor: call < 204 ? String(call + 1) : null }));
    expect(await run(activities)).toEqual({ result: { imported: 205 } });
    expect(trace.begun).toHaveLength(1);
    expect(trace.pages.map((page) => page.cursor)).toEqual([null, ...Array.from({ length: 204 }, (_, index) => String(index + 1))]);
    expect(trace.finished).toEqual([null]);
  });

  it('a refusal ends the sync at once with its own type and message, recorded as the end state', async () => {
    const { trace, activities } = fakes(async (call) => {
      if (call === 0) return { imported: 4, nextCursor: '100' };
      throw ApplicationFailure.nonRetryable('Matomo refused the token (401)', 'AnalyticsRefused');
    });
    const outcome = await run(activities);
    expect(trace.pages).toHaveLength(2);
    expect(trace.finished).toEqual(['Matomo refused the token (401)']);
    const { error } = outcome as { error: WorkflowFailedError };
    expect(error).toBeInstanceOf(WorkflowFailedError);
    expect(error.cause).toBeInstanceOf(ApplicationFailure);
    expect(error.cause).toMatchObject({ type: 'AnalyticsRefused', message: 'Matomo refused the token (401)', nonRetryable: true });
  });

  it('an outage is tried three times: one that passes by then finishes the sync, one that lasts fails it with its reason', async () => {
    let failures = 2;
    const passing = fakes(async () => {
      if (failures-- > 0) throw ApplicationFailure.retryable('Matomo answered 503', 'AnalyticsUnavailable');
      return { imported: 7, nextCursor: null };
    });
    expect(await run(passing.activities)).toEqual({ result: { imported: 7 } });
    expect(passing.trace.pages).toHaveLength(3);

    const lasting = fakes(async () => {
      throw ApplicationFailure.retryable('Matomo answered 503', 'AnalyticsUnavailable');
    });
    const outcome = await run(lasting.activities);
    expect(lasting.trace.pages).toHaveLength(3);
    expect(lasting.trace.finished).toEqual(['Matomo answered 503']);
    expect((outcome as { error: WorkflowFailedError }).error.cause).toMatchObject({ type: 'AnalyticsUnavailable', message: 'Matomo answered 503' });
  });
});
