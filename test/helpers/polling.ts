/**
 * Waits for an outcome the stack reaches on its own (a workflow step, a delivery): reads until `done` holds,
 * every 100 ms, and fails with the last value read when it never does.
 */
export async function until<T>(what: string, read: () => Promise<T>, done: (value: T) => boolean, timeoutMs = 30_000): Promise<T> {
  for (const deadline = Date.now() + timeoutMs; ; await new Promise((resolve) => setTimeout(resolve, 100))) {
    const value = await read();
    if (done(value)) return value;
    if (Date.now() > deadline) throw new Error(`never: ${what} (last: ${JSON.stringify(value)})`);
  }
}

/** The body of a response that must have this status; anything else fails with the body it had. */
export async function expectStatus(response: Promise<{ status: number; body: unknown }>, status: number): Promise<Record<string, unknown>> {
  const answer = await response;
  if (answer.status !== status) throw new Error(`expected ${status}, got ${answer.status}: ${JSON.stringify(answer.body)}`);
  return answer.body as Record<string, unknown>;
}
