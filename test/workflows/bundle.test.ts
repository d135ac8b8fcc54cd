import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { bundleWorkflowCode } from '@temporalio/worker';

describe('workflow bundle', () => {
  it('the workflows bundle: nothing non-deterministic is reachable from workflows/index.ts', async () => {
    const bundle = await bundleWorkflowCode({ workflowsPath: require.resolve('../../workflows'), logger: silent });
    expect(bundle.code).toContain('usageRollupWorkflow');
  });

  it('a workflow that imports a Node module fails to bundle (so such a change fails CI)', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'wf-probe-'));
    const file = join(dir, 'index.ts');
    writeFileSync(file, "import { readFileSync } from 'node:fs';\nexport async function probe() { return readFileSync('x'); }\n");
    await expect(bundleWorkflowCode({ workflowsPath: file, logger: silent })).rejects.toThrow();
  });
});

const noop = () => undefined;
const silent = { trace: noop, debug: noop, info: noop, warn: noop, error: noop, log: noop };
