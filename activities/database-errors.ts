/**
 * Runs `work` until it succeeds or `deadlineMs` passes, waiting a little longer after each failure. For
 * writes that must not be lost after a provider accepted a message: retried here, inside the attempt,
 * rather than by a new attempt that would call the provider again.
 */
export async function untilItHolds<T>(work: () => Promise<T>, deadlineMs: number, onRetry: (error: unknown) => void): Promise<T> {
  const deadline = Date.now() + deadlineMs;
  for (let wait = 200; ; wait = Math.min(wait * 2, 5_000)) {
    try {
      return await work();
    } catch (error) {
      if (Date.now() + wait > deadline) throw error;
      onRetry(error);
      await new Promise((resolve) => setTimeout(resolve, wait));
    }
  }
}
