import { createGroupBatcher } from '../../core/group-batcher';

/** A run whose batches finish only when the test says so, recording what each batch held. */
function controlledRun() {
  const batches: Array<{ group: string; items: number[]; finish: (error?: Error) => void }> = [];
  const run = (group: string, items: number[]) =>
    new Promise<number[]>((resolve, reject) => {
      batches.push({ group, items, finish: (error) => (error ? reject(error) : resolve(items.map((item) => item * 10))) });
    });
  return { batches, run };
}

const tick = () => new Promise((resolve) => setImmediate(resolve));

describe('group batcher', () => {
  it('runs an item of an idle group at the end of the turn, and batches what arrives while a batch runs', async () => {
    const { batches, run } = controlledRun();
    const batcher = createGroupBatcher(run, { maxBatch: 100, maxInFlight: 1 });
    const first = batcher.submit('a', 1);
    expect(batches).toHaveLength(0);
    await tick();
    expect(batches.map((batch) => batch.items)).toEqual([[1]]);
    const later = [batcher.submit('a', 2), batcher.submit('a', 3), batcher.submit('a', 4)];
    expect(batches).toHaveLength(1);
    batches[0].finish();
    expect(await first).toBe(10);
    await tick();
    expect(batches.map((batch) => batch.items)).toEqual([[1], [2, 3, 4]]);
    batches[1].finish();
    expect(await Promise.all(later)).toEqual([20, 30, 40]);
  });

  it('gathers what one turn submits into one batch', async () => {
    const { batches, run } = controlledRun();
    const batcher = createGroupBatcher(run, { maxBatch: 100, maxInFlight: 4 });
    const outcomes = [1, 2, 3].map((item) => batcher.submit('a', item));
    await tick();
    expect(batches.map((batch) => batch.items)).toEqual([[1, 2, 3]]);
    batches[0].finish();
    expect(await Promise.all(outcomes)).toEqual([10, 20, 30]);
  });

  it('keeps groups apart, bounds batches and batches in flight, and rejects only the failed batch', async () => {
    const { batches, run } = controlledRun();
    const batcher = createGroupBatcher(run, { maxBatch: 2, maxInFlight: 2 });
    const outcomes = [1, 2, 3, 4, 5, 6].map((item) => batcher.submit('a', item).catch((error: Error) => error.message));
    const other = batcher.submit('b', 7);
    await tick();
    // Two batches in flight for `a`, the rest waiting; `b` is not held up by `a`.
    expect(batches.map((batch) => [batch.group, batch.items])).toEqual([['a', [1, 2]], ['a', [3, 4]], ['b', [7]]]);
    batches[1].finish(new Error('database gone'));
    await tick();
    batches[0].finish();
    await tick();
    expect(batches.map((batch) => batch.items)).toEqual([[1, 2], [3, 4], [7], [5, 6]]);
    for (const batch of batches.slice(2)) batch.finish();
    expect(await Promise.all(outcomes)).toEqual([10, 20, 'database gone', 'database gone', 50, 60]);
    expect(await other).toBe(70);
  });
});
