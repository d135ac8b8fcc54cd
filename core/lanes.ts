/**
 * Runs `work` over the items, at most `lanes` at a time, each lane taking the next item as it finishes
 * one: bounded concurrency for work that waits on the network (database, Temporal, a provider).
 */
export async function inLanes<T>(items: readonly T[], lanes: number, work: (item: T) => Promise<void>): Promise<void> {
  const queue = [...items];
  const lane = async () => {
    for (let item = queue.shift(); item !== undefined; item = queue.shift()) await work(item);
  };
  await Promise.all(Array.from({ length: Math.min(lanes, items.length) }, lane));
}
