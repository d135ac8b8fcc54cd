/**
 * Group commit for requests that arrive one at a time: items of the same group submitted in the same turn
 * of the event loop, or while the group's previous batches are still running, are handed to `run`
 * together. An idle group's item runs at the end of the current turn (well under a millisecond), so
 * batching adds no wait at low load and grows with the load (a batch holds what arrived during one round
 * trip); a batch of work started together (a chunk of a bulk delivery) becomes one statement. `run`
 * answers by index; if it throws, every item of that batch is rejected with the error.
 */
export interface GroupBatcher<I, O> {
  submit(group: string, item: I): Promise<O>;
}

interface Waiting<I, O> {
  item: I;
  resolve: (outcome: O) => void;
  reject: (error: unknown) => void;
}

export function createGroupBatcher<I, O>(
  run: (group: string, items: I[]) => Promise<O[]>,
  options: { maxBatch: number; maxInFlight: number },
): GroupBatcher<I, O> {
  const groups = new Map<string, { waiting: Array<Waiting<I, O>>; inFlight: number; scheduled: boolean }>();

  const pump = (name: string) => {
    const group = groups.get(name);
    if (!group) return;
    while (group.inFlight < options.maxInFlight && group.waiting.length > 0) {
      const taken = group.waiting.splice(0, options.maxBatch);
      group.inFlight += 1;
      run(name, taken.map((waiting) => waiting.item))
        .then(
          (outcomes) => taken.forEach((waiting, index) => waiting.resolve(outcomes[index])),
          (error: unknown) => taken.forEach((waiting) => waiting.reject(error)),
        )
        .finally(() => {
          group.inFlight -= 1;
          if (group.inFlight === 0 && group.waiting.length === 0) groups.delete(name);
          else pump(name);
        });
    }
  };

  return {
    submit(name, item) {
      return new Promise<O>((resolve, reject) => {
        const group = groups.get(name) ?? { waiting: [], inFlight: 0, scheduled: false };
        groups.set(name, group);
        group.waiting.push({ item, resolve, reject });
        if (group.scheduled) return;
        group.scheduled = true;
        setImmediate(() => {
          group.scheduled = false;
          pump(name);
        });
      });
    },
  };
}
