/** The workflow registry the worker bundles. Only deterministic code may be reachable from here. */
export { usageRollupWorkflow } from './usage-rollup';
