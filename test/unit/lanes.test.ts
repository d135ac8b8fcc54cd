import { inLanes } from '../../core/lanes';

describe('inLanes', () => {
  it('does every item once, never more than the lanes at a time, and nothing for no items', async () => {
    let running = 0;
    let most = 0;
    const done: number[] = [];
    await inLanes([1, 2, 3, 4, 5, 6, 7], 3, async (item) => {
      running += 1;
      most = Math.max(most, running);
      await new Promise((resolve) => setTimeout(resolve, 5 * (item % 3)));
      done.push(item);
      running -= 1;
    });
    expect(done.sort()).toEqual([1, 2, 3, 4, 5, 6, 7]);
    expect(most).toBe(3);
    await expect(inLanes([], 4, async () => undefined)).resolves.toBeUndefined();
  });
});
