import { randomUUID } from 'node:crypto';
import { mkdtempSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { NativeConnection } from '@temporalio/worker';
import { Registry } from 'prom-client';
import { createActivities } from '../../activities';
import { loadConfig } from '../../core/config';
import { createSequelize } from '../../db/sequelize';
import { createDefaultWorker, createSendsWorker } from '../../workers/create-worker';
import { groupsOf } from '../../bench/heap-diff';
import { registerMemoryMetrics, workflowThreads, writeHeapSnapshots } from '../../workers/memory-diagnostics';
import { temporalPorts } from '../../temporal/activity-ports';
import { lazyTemporalClient } from '../../temporal/connection';

/** The value of one labelled sample in Prometheus text, NaN when absent. */
function sampleOf(text: string, line: string): number {
  const found = text.split('\n').find((entry) => entry.startsWith(`${line} `));
  return found ? Number(found.slice(found.lastIndexOf(' ') + 1)) : Number.NaN;
}

describe('where the worker\'s memory is (workers/memory-diagnostics.ts)', () => {
  const config = loadConfig({ ...process.env, TASK_QUEUE_PREFIX: `test-${randomUUID()}-` });
  const db = createSequelize(config.DATABASE_URL);
  let connection: NativeConnection;

  beforeAll(async () => {
    connection = await NativeConnection.connect({ address: config.TEMPORAL_ADDRESS });
  });
  afterAll(async () => {
    await connection.close();
    await db.close();
  });

  it('a worker with workflows → its workflow thread\'s heap and cache are gauges, and snapshots of both threads are owner-only files; a worker without workflows has no thread', async () => {
    const options = { connection, namespace: config.TEMPORAL_NAMESPACE, taskQueuePrefix: config.TASK_QUEUE_PREFIX, activities: createActivities({ db, config, temporal: temporalPorts(lazyTemporalClient(config), config.TASK_QUEUE_PREFIX) }) };
    const named = [
      { queue: 'default', worker: await createDefaultWorker(options) },
      { queue: 'sends', worker: await createSendsWorker(options) },
    ];
    expect(workflowThreads(named[0].worker)).toHaveLength(1);
    expect(workflowThreads(named[1].worker)).toHaveLength(0);
    const registry = new Registry();
    registerMemoryMetrics(registry, named);
    // Both run (a created worker is shut down by running it); the checks run while they poll.
    await named[1].worker.runUntil(
      named[0].worker.runUntil(async () => {
        const text = await registry.metrics();
        // The thread holds the workflow bundle: megabytes the main thread's heap gauges never count.
        expect(sampleOf(text, 'temporal_workflow_thread_heap_used_bytes{queue="default"}')).toBeGreaterThan(2 ** 20);
        expect(text).not.toContain('temporal_workflow_thread_heap_used_bytes{queue="sends"}');
        expect(sampleOf(text, 'temporal_worker_cached_workflows{queue="default"}')).toBe(0);
        expect(sampleOf(text, 'nodejs_array_buffers_bytes')).toBeGreaterThan(0);

        // The snapshots a soak compares: the main thread's and the workflow thread's, readable by the owner alone.
        const dir = join(mkdtempSync(join(tmpdir(), 'worker-heap-')), 'snapshots');
        try {
          const files = await writeHeapSnapshots(dir, named);
          expect(files.map((file) => file.slice(file.lastIndexOf('Z-') + 2))).toEqual(['main.heapsnapshot', 'default-workflows-0.heapsnapshot']);
          for (const file of files) expect(statSync(file).mode & 0o777).toBe(0o600);
          expect(statSync(dir).mode & 0o777).toBe(0o700);
          expect(groupsOf(files[1]).get('Object')?.count).toBeGreaterThan(100);
        } finally {
          rmSync(join(dir, '..'), { recursive: true, force: true });
        }
      }),
    );
  });
});
