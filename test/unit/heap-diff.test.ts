import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Worker } from 'node:worker_threads';
import { groupsOf } from '../../bench/heap-diff';

/** A real V8 heap snapshot of a small thread that keeps `count` instances of a class of its own. */
async function snapshotOfThreadHolding(count: number, dir: string, name: string): Promise<string> {
  const thread = new Worker(`class SoakLeak { constructor(i) { this.i = i; } } globalThis.kept = Array.from({ length: ${count} }, (_, i) => new SoakLeak(i)); require('node:worker_threads').parentPort.postMessage('ready'); setInterval(() => {}, 1000);`, { eval: true });
  await new Promise((resolve) => thread.once('message', resolve));
  const chunks: Buffer[] = [];
  for await (const chunk of await thread.getHeapSnapshot()) chunks.push(chunk as Buffer);
  await thread.terminate();
  const file = join(dir, name);
  writeFileSync(file, Buffer.concat(chunks));
  return file;
}

describe('heap snapshot comparison (bench/heap-diff.ts)', () => {
  const dir = mkdtempSync(join(tmpdir(), 'heap-diff-'));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it('a thread holding 200 then 5,000 objects of one class → counted under its constructor, 200 then 5,000', async () => {
    const before = groupsOf(await snapshotOfThreadHolding(200, dir, 'before.heapsnapshot'));
    const after = groupsOf(await snapshotOfThreadHolding(5_000, dir, 'after.heapsnapshot'));
    expect(before.get('SoakLeak')?.count).toBe(200);
    expect(after.get('SoakLeak')?.count).toBe(5_000);
    // A V8 object with one in-object field: a map pointer, properties, elements and the field, at least 16 bytes each.
    expect(after.get('SoakLeak')?.bytes).toBeGreaterThanOrEqual(5_000 * 16);
    expect([...after.values()].reduce((sum, group) => sum + group.count, 0)).toBeGreaterThan(5_000);
  });
});
