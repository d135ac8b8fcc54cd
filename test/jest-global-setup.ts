import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, readdirSync, readFileSync, renameSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { bundleWorkflowCode } from '@temporalio/worker';
import { bundlerWarningsOnly, workflowBundleOptions } from '../workers/workflow-bundle';

const root = resolve(__dirname, '..');
const cacheDir = join(root, '.data/cache/workflow-bundle');
// What the bundle can be built from: the workflows, what they import (core/, and activities/ for their types),
// the bundle options, the compiler settings and every package version (the SDK's webpack config included).
const inputDirs = ['workflows', 'core', 'activities'];
const inputFiles = ['workers/workflow-bundle.ts', 'tsconfig.json', 'package-lock.json'];
// Another run's bundle (other sources) is left alone for this long, in case that run is still going.
const STALE_MS = 3_600_000;

function sourcesHash(): string {
  const files = inputDirs.flatMap((dir) =>
    readdirSync(join(root, dir), { withFileTypes: true, recursive: true })
      .filter((entry) => entry.isFile())
      .map((entry) => join(entry.parentPath, entry.name)),
  );
  const hash = createHash('sha256');
  for (const file of [...files.sort(), ...inputFiles.map((name) => join(root, name))]) {
    hash.update(relative(root, file)).update('\0').update(readFileSync(file)).update('\0');
  }
  return hash.digest('hex').slice(0, 16);
}

/**
 * Builds the workflow bundle once per test run instead of once per worker (webpack: seconds of CPU each, twice
 * per test stack), and hands its path to every test file through the environment, which jest's workers
 * inherit (test/helpers/workflow-bundle-setup.ts). Keyed by a hash of its sources, so a run after an edit
 * rebuilds it from the current code and a run without one reuses the same bytes; bundle failures (a Node import
 * reached from workflows/) fail the run here, and test/workflows/bundle.test.ts still bundles from source.
 */
export default async function globalSetup(): Promise<void> {
  mkdirSync(cacheDir, { recursive: true });
  const codePath = join(cacheDir, `${sourcesHash()}.js`);
  // Run once per selected project (workflows, integration): the second finds the first's file.
  if (!existsSync(codePath)) {
    const { code } = await bundleWorkflowCode({ ...workflowBundleOptions(), logger: bundlerWarningsOnly });
    // Written aside and renamed: a run starting meanwhile in the same checkout never reads half a file.
    const partial = `${codePath}.${process.pid}.partial`;
    writeFileSync(partial, code);
    renameSync(partial, codePath);
  }
  for (const name of readdirSync(cacheDir)) {
    const path = join(cacheDir, name);
    if (path !== codePath && Date.now() - statSync(path).mtimeMs > STALE_MS) rmSync(path, { force: true });
  }
  process.env.TEST_WORKFLOW_BUNDLE = codePath;
  // The Temporal SDK's warnings of this run (test/helpers/quiet-temporal-runtime.ts): one file, this run's only.
  const temporalLog = join(root, '.data/logs/temporal-test.log');
  mkdirSync(dirname(temporalLog), { recursive: true });
  if (!process.env.TEST_TEMPORAL_LOG) writeFileSync(temporalLog, '');
  process.env.TEST_TEMPORAL_LOG = temporalLog;
}
