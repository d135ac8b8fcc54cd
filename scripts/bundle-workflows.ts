/**
 * Builds the workflow bundle the worker would build at start, into a file the worker loads instead
 * (WORKFLOW_BUNDLE_PATH): a deploy builds it once, and each worker starts without running webpack.
 *
 *   npm run workflows:bundle -- <out.js>
 */
import { renameSync, writeFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { bundleWorkflowCode } from '@temporalio/worker';
import { bundlerWarningsOnly, workflowBundleOptions } from '../workers/workflow-bundle';

async function main(): Promise<void> {
  const out = process.argv[2];
  if (!out) throw new Error('usage: npm run workflows:bundle -- <out.js>');
  const { code } = await bundleWorkflowCode({ ...workflowBundleOptions(), logger: bundlerWarningsOnly });
  // Written aside and renamed: a worker starting meanwhile never reads half a file.
  const path = resolve(out);
  writeFileSync(`${path}.partial`, code);
  renameSync(`${path}.partial`, path);
  console.log(`workflow bundle: ${path} (${Math.round(code.length / 1024)} KiB)`);
}

main().catch((error: unknown) => {
  console.error(error);
  process.exit(1);
});
