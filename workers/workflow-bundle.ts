import { type BundleOptions, bundleWorkflowCode, Runtime, type WorkflowBundleOption } from '@temporalio/worker';
import { activeTracing } from '../infra/tracing';

/**
 * What the workflow bundle is built from. One place, because a worker given a prebuilt bundle ignores its own
 * `workflowsPath` and workflow interceptor modules: whatever the workflows need (interceptors included) goes here,
 * and every bundle (this process's, the test run's in test/jest-global-setup.ts) is built from it.
 */
export function workflowBundleOptions(options: { tracing: boolean } = { tracing: false }): BundleOptions {
  return {
    workflowsPath: require.resolve('../workflows'),
    // With tracing on (workers/tracing.ts), the package's workflow interceptors make the RunWorkflow and
    // StartActivity spans; off, nothing of OpenTelemetry enters the bundle.
    ...(options.tracing && { workflowInterceptorModules: [require.resolve('@temporalio/interceptors-opentelemetry/lib/workflow-interceptors')] }),
  };
}

/** One bundle per tracing setting: a test process runs stacks with tracing off and on. */
const bundles = new Map<boolean, Promise<WorkflowBundleOption>>();

/**
 * The workflow code every worker of this process runs. Webpack takes seconds of CPU per bundle; the control
 * and default workers run the same workflows, so they share one bundle, built on first use.
 */
export function workflowBundle(): Promise<WorkflowBundleOption> {
  const tracing = activeTracing() !== null;
  let bundle = bundles.get(tracing);
  if (!bundle) {
    // The runtime's logger, as Worker.create gives its own bundler: the process's log level holds.
    bundle = bundleWorkflowCode({ ...workflowBundleOptions({ tracing }), logger: Runtime.instance().logger }).catch((error: unknown) => {
      // A failed build is not remembered: the next worker tries again (and reports the same error if it stands).
      bundles.delete(tracing);
      throw error;
    });
    bundles.set(tracing, bundle);
  }
  return bundle;
}

/**
 * Makes this process's workers load an already-built bundle instead of building one: the test run's, built
 * once from the current sources for all test files (test/helpers/workflow-bundle-setup.ts).
 */
export function useWorkflowBundle(prebuilt: WorkflowBundleOption): void {
  bundles.set(false, Promise.resolve(prebuilt));
}

const ignore = () => undefined;
/** For builds outside a worker (a deploy, the test run): the bundler's info lines (its size) help nobody; its warnings and errors do. */
export const bundlerWarningsOnly = { trace: ignore, debug: ignore, info: ignore, log: ignore, warn: console.warn, error: console.error };
