import { type BundleOptions, bundleWorkflowCode, Runtime, type WorkflowBundleOption } from '@temporalio/worker';

/**
 * What the workflow bundle is built from. One place, because a worker given a prebuilt bundle ignores its own
 * `workflowsPath` and workflow interceptor modules: whatever the workflows need (interceptors included) goes here,
 * and every bundle (this process's, the test run's in test/jest-global-setup.ts) is built from it.
 */
export function workflowBundleOptions(): BundleOptions {
  return { workflowsPath: require.resolve('../workflows') };
}

let bundle: Promise<WorkflowBundleOption> | null = null;

/**
 * The workflow code every worker of this process runs. Webpack takes seconds of CPU per bundle; the control
 * and default workers run the same workflows, so they share one bundle, built on first use.
 */
export function workflowBundle(): Promise<WorkflowBundleOption> {
  // The runtime's logger, as Worker.create gives its own bundler: the process's log level holds.
  bundle ??= bundleWorkflowCode({ ...workflowBundleOptions(), logger: Runtime.instance().logger }).catch((error: unknown) => {
    // A failed build is not remembered: the next worker tries again (and reports the same error if it stands).
    bundle = null;
    throw error;
  });
  return bundle;
}

/**
 * Makes this process's workers load an already-built bundle instead of building one: the test run's, built
 * once from the current sources for all test files (test/helpers/workflow-bundle-setup.ts).
 */
export function useWorkflowBundle(prebuilt: WorkflowBundleOption): void {
  bundle = Promise.resolve(prebuilt);
}
