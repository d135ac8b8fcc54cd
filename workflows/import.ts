import { ActivityFailure, ApplicationFailure, continueAsNew, defineSignal, proxyActivities, setHandler, sleep, workflowInfo } from '@temporalio/workflow';
import type { ImportActivities, ImportStep } from '../activities/imports';
import { siblingQueue } from '../core/task-queues';

/** The API canceled the job (the row says so already); the workflow stops before its next slice. */
export const cancelImportSignal = defineSignal('cancel');

export interface ImportWorkflowInput {
  workspaceId: string;
  importId: string;
  /** Set once the job reached `importing`, so a continued run goes straight to its slices. */
  prepared?: boolean;
}

/** Our own database and blob store only: retried until they answer. Counting a big file takes a while. */
const { prepareImport, failImport, discardImportFile } = proxyActivities<ImportActivities>({
  startToCloseTimeout: '15 minutes',
  heartbeatTimeout: '1 minute',
  retry: { initialInterval: '1 second', backoffCoefficient: 2, maximumInterval: '1 minute' },
});

/**
 * A slice lasts about 10 s, on the `bulk` queue beside the workflow's (its own few slots); the heartbeat after
 * each batch, not the timeout, notices a dead worker.
 */
const sliceActivities = () =>
  proxyActivities<ImportActivities>({
    taskQueue: siblingQueue(workflowInfo().taskQueue, 'control', 'bulk'),
    startToCloseTimeout: '5 minutes',
    heartbeatTimeout: '30 seconds',
    retry: { initialInterval: '1 second', backoffCoefficient: 2, maximumInterval: '1 minute' },
  });

/** Slices per run before continuing as new (about 6 history events each). */
const SLICES_PER_RUN = 100;
/** The API starts the workflow inside the transaction that inserts the job: its first look may come early. */
const MISSING_LOOKS = 5;

export type ImportOutcome = ImportStep['state'];

/**
 * One contact import, `import:<importId>` (docs/imports.md): prepare (download a URL's file into our
 * store, count its rows), then slices of batches until the file ends, the checkpoint carried in the job
 * row (so a retried slice or a new run resumes where the last commit left it). A cancel is written by the
 * API and noticed by the next batch or slice. Every import ends completed, failed (with a reason) or
 * canceled: a failure no retry can fix is written as the job's failure. At the end, a URL's copy is deleted.
 */
export async function importWorkflow(input: ImportWorkflowInput): Promise<ImportOutcome> {
  const ref = { workspaceId: input.workspaceId, importId: input.importId };
  let canceled = false;
  setHandler(cancelImportSignal, () => {
    canceled = true;
  });

  const { importSlice } = sliceActivities();

  async function run(): Promise<ImportOutcome> {
    if (!input.prepared) {
      let prepared = await prepareImport(ref);
      for (let look = 1; prepared.state === 'missing' && look < MISSING_LOOKS; look += 1) {
        await sleep(look * 1000);
        prepared = await prepareImport(ref);
      }
      if (prepared.state !== 'importing') return prepared.state;
    }
    for (let slice = 1; ; slice += 1) {
      if (canceled) return 'canceled';
      const step = await importSlice(ref);
      if (step.state !== 'importing') return step.state;
      if (slice >= SLICES_PER_RUN || workflowInfo().continueAsNewSuggested) {
        await continueAsNew<typeof importWorkflow>({ ...ref, prepared: true });
      }
    }
  }

  let outcome: ImportOutcome;
  try {
    outcome = await run();
  } catch (error) {
    // Continuing as new is not an end: it goes on in the next run.
    if (!(error instanceof ActivityFailure)) throw error;
    const cause = error.cause instanceof ApplicationFailure ? error.cause.message : error.message;
    outcome = (await failImport({ ...ref, reason: `The import stopped: ${cause}` })).state;
  }
  if (outcome !== 'missing') await discardImportFile(ref);
  return outcome;
}
