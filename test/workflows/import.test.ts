import { randomUUID } from 'node:crypto';
import { ApplicationFailure } from '@temporalio/common';
import { Worker } from '@temporalio/worker';
import type { ImportActivities, ImportRef, ImportStep } from '../../activities/imports';
import { cancelImportSignal, importWorkflow } from '../../workflows/import';
import { startTimeSkipping, type TimeSkippingEnv } from '../helpers/time-skipping';
import { workflowBundle } from '../../workers/workflow-bundle';

jest.setTimeout(120_000);

/**
 * An import's job row as the activities see it, in memory: prepare answers `missing` for its first few
 * looks (the API's transaction not yet committed), each slice moves the checkpoint by one batch, and the
 * job completes when the file's batches are all in. A batch written twice is a duplicate.
 */
class FakeImport {
  phase: ImportStep['state'] = 'queued';
  readonly written: number[] = [];
  readonly duplicates: number[] = [];
  prepares = 0;
  slices = 0;
  failures: string[] = [];
  discarded = 0;
  /** Runs before each slice with its number (1-based): the test cancels there. */
  onSlice: (slice: number) => Promise<void> | void = () => undefined;
  /** The slice that fails for good (a bug no retry can fix). */
  brokenSlice?: number;

  constructor(
    readonly batches: number,
    private readonly invisibleLooks = 0,
  ) {}

  activities() {
    return {
      prepareImport: async (): Promise<ImportStep> => {
        this.prepares += 1;
        if (this.prepares <= this.invisibleLooks) return { state: 'missing' };
        if (this.phase === 'queued') this.phase = 'importing';
        return { state: this.phase };
      },
      importSlice: async (): Promise<ImportStep> => {
        this.slices += 1;
        await this.onSlice(this.slices);
        if (this.slices === this.brokenSlice) throw ApplicationFailure.nonRetryable('the stored file is not a CSV file');
        if (this.phase !== 'importing') return { state: this.phase };
        const batch = this.written.length + 1;
        if (this.written.includes(batch)) this.duplicates.push(batch);
        this.written.push(batch);
        if (this.written.length === this.batches) this.phase = 'completed';
        return { state: this.phase };
      },
      failImport: async (ref: ImportRef & { reason: string }): Promise<ImportStep> => {
        this.failures.push(ref.reason);
        this.phase = 'failed';
        return { state: 'failed' };
      },
      discardImportFile: async (): Promise<void> => {
        this.discarded += 1;
      },
    } satisfies Pick<ImportActivities, 'prepareImport' | 'importSlice' | 'failImport' | 'discardImportFile'>;
  }
}

describe('import workflow', () => {
  let env: TimeSkippingEnv;
  beforeAll(async () => {
    env = await startTimeSkipping();
  });
  afterAll(() => env.close());

  const run = async <T>(fake: FakeImport, body: (handle: Awaited<ReturnType<typeof start>>) => Promise<T>): Promise<T> => {
    const worker = await Worker.create({ connection: env.nativeConnection, taskQueue: env.taskQueue, workflowBundle: await workflowBundle(), activities: fake.activities() });
    return worker.runUntil(body(await start()));
  };
  const start = () =>
    env.workflowClient.start(importWorkflow, {
      taskQueue: env.taskQueue,
      workflowId: `import:${randomUUID()}`,
      args: [{ workspaceId: randomUUID(), importId: randomUUID() }],
    });

  it('a job not yet visible is looked at again; then every batch is written once, across continue-as-new, and the import completes', async () => {
    const fake = new FakeImport(230, 2);
    const { outcome, continued } = await run(fake, async (handle) => {
      const result = await handle.result();
      return { outcome: result, continued: (await handle.describe()).runId !== handle.firstExecutionRunId };
    });
    expect(outcome).toBe('completed');
    expect(continued).toBe(true);
    // Once, by the last run: continuing as new is not an end.
    expect(fake.discarded).toBe(1);
    expect(fake.prepares).toBe(3);
    expect(fake.written).toHaveLength(230);
    expect(fake.duplicates).toEqual([]);
    // 230 slices: two continue-as-new at 100 and 200; a continued run does not prepare again.
    expect(fake.slices).toBe(230);
  });

  it('a job that never becomes visible ends the workflow as missing after a few looks', async () => {
    const fake = new FakeImport(3, 100);
    expect(await run(fake, (handle) => handle.result())).toBe('missing');
    expect(fake.prepares).toBe(5);
    expect(fake.slices).toBe(0);
    expect(fake.discarded).toBe(0);
  });

  it('a cancel signal stops the import before its next slice', async () => {
    // The job row would say canceled too; here only the signal can stop the loop, which would go on for 50 slices.
    const fake = new FakeImport(50);
    const outcome = await run(fake, async (handle) => {
      fake.onSlice = async (slice) => {
        if (slice === 3) await handle.signal(cancelImportSignal);
      };
      return handle.result();
    });
    expect(outcome).toBe('canceled');
    expect(fake.slices).toBe(3);
    expect(fake.written).toHaveLength(3);
  });

  it('a failure no retry can fix is written as the job\'s failure with its reason', async () => {
    const fake = new FakeImport(10);
    fake.brokenSlice = 4;
    expect(await run(fake, (handle) => handle.result())).toBe('failed');
    expect(fake.written).toHaveLength(3);
    expect(fake.failures).toEqual(['The import stopped: the stored file is not a CSV file']);
    expect(fake.discarded).toBe(1);
  });
});
