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
