import { Connection, type Client } from '@temporalio/client';

/**
 * One deadline over a group of Temporal calls, so a request (or a loop's round) gives up on an unreachable
 * Temporal in time: the gRPC calls inside share it, and their own retries never outlive it. What could not be
 * started in time is left to the outbox, the sweeper or the watchdog, whichever owns it.
 */
export function withDeadline<T>(temporal: Client | Connection, timeoutMs: number, work: () => Promise<T>): Promise<T> {
  const connection = temporal instanceof Connection ? temporal : temporal.connection;
  return connection.withDeadline(Date.now() + timeoutMs, work);
}
