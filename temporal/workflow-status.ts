import { type Client, WorkflowNotFoundError } from '@temporalio/client';

/** What Temporal says of a workflow by id: running, closed with its status name (TERMINATED, FAILED, ...), or missing. */
export type WorkflowVerdict = { kind: 'running' } | { kind: 'missing' } | { kind: 'closed'; status: string };

/**
 * Asks Temporal about one workflow, for the repairs that compare the database with it (the reconciler, the
 * webhook slot sweep). A workflow whose history is gone (past retention, or never started) is missing.
 */
export async function workflowVerdict(client: Client, workflowId: string): Promise<WorkflowVerdict> {
  try {
    const description = await client.workflow.getHandle(workflowId).describe();
    return description.status.name === 'RUNNING' ? { kind: 'running' } : { kind: 'closed', status: description.status.name };
  } catch (error) {
    if (error instanceof WorkflowNotFoundError) return { kind: 'missing' };
    throw error;
  }
}
