/** Measures of a run of send instants (ms), for pacing tests and benchmarks. */

/**
 * The least share of a configured rate a pacing test asks for. An upper bound is a correctness
 * property and is asserted exactly; the lower one depends on how busy this machine is while the suite
 * runs (a CI run saw 93% of 200/s beside other suites, another 74.6% with 60 callers retrying on 2 cores).
 * The test proves pacing never starves its callers; the 95% target is measured by `npm run bench -- pacer`
 * and `-- delivery`.
 */
export const KEEPS_UP = 0.6;

/** The most instants any closed window of `windowMs` holds (sliding, starting at every instant). */
export function maxInWindow(instants: readonly number[], windowMs: number): number {
  const sorted = [...instants].sort((a, b) => a - b);
  let most = 0;
  for (let last = 0, first = 0; last < sorted.length; last += 1) {
    while (sorted[last] - sorted[first] > windowMs) first += 1;
    most = Math.max(most, last - first + 1);
  }
  return most;
}

/** Sends per second from the first instant to the last: the rate the run achieved. */
export function achievedRate(instants: readonly number[]): number {
  const first = Math.min(...instants);
  const last = Math.max(...instants);
  return ((instants.length - 1) * 1_000) / (last - first);
}

/** Smallest gap between consecutive instants. */
export function smallestGap(instants: readonly number[]): number {
  const sorted = [...instants].sort((a, b) => a - b);
  return Math.min(...sorted.slice(1).map((instant, i) => instant - sorted[i]));
}
