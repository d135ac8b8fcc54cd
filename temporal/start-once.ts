import { isGrpcServiceError } from '@temporalio/client';
import { WorkflowExecutionAlreadyStartedError, WorkflowNotFoundError } from '@temporalio/common';

/** A start that found its workflow already running (a retry, a second dispatcher) succeeded. */
export async function startOnce(start: () => Promise<unknown>): Promise<void> {
  try {
    await start();
  } catch (error) {
    if (!(error instanceof WorkflowExecutionAlreadyStartedError)) throw error;
  }
}

/** A signal to a workflow that already ended has nothing left to tell: false, not an error. */
export async function signalIfRunning(signal: () => Promise<void>): Promise<boolean> {
  try {
    await signal();
    return true;
  } catch (error) {
    if (error instanceof WorkflowNotFoundError) return false;
    throw error;
  }
}

/** gRPC's INVALID_ARGUMENT, as the client library reports it. */
const INVALID_ARGUMENT = 3;

/**
 * Whether Temporal refused a start outright (INVALID_ARGUMENT: a search attribute the namespace does not
 * know, a value over its size limit) rather than failing to answer: retrying the same start cannot help,
 * and nothing was started.
 */
export function startRefused(error: unknown): boolean {
  const cause = error instanceof Error ? error.cause : undefined;
  return [error, cause].some((candidate) => isGrpcServiceError(candidate) && candidate.code === INVALID_ARGUMENT);
}
