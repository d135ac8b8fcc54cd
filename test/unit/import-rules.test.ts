import { execFile } from 'node:child_process';
import { resolve } from 'node:path';
import { promisify } from 'node:util';

/**
 * The import rules of scripts/lint/ (run by `npm run lint:imports` over the whole tree) each fail on a tree
 * that breaks them (test/fixtures/import-rules): a rule that never fires would pass every tree.
 */
const root = resolve(__dirname, '../..');
const fixture = resolve(root, 'test/fixtures/import-rules');
const depcruise = resolve(root, 'node_modules/dependency-cruiser/bin/dependency-cruiser.mjs');

interface Violation {
  rule: { name: string };
  from: string;
  to: string;
}

async function violations(config: string, ...paths: string[]): Promise<Array<{ rule: string; from: string; to: string }>> {
  // depcruise exits non-zero when it finds violations; the report is on stdout either way.
  const { stdout } = await promisify(execFile)(process.execPath, [depcruise, '--config', resolve(root, config), '--output-type', 'json', ...paths], { cwd: fixture })
    .catch((error: { stdout?: string }) => ({ stdout: error.stdout ?? '' }));
  const report = JSON.parse(stdout) as { summary: { violations: Violation[] } };
  return report.summary.violations.map((violation) => ({ rule: violation.rule.name, from: violation.from, to: violation.to }));
}

describe('the import rules', () => {
  it('a cycle of type-only imports, and an activity importing workflows/ or temporal/, each fail the import lint', async () => {
    const found = await violations('scripts/lint/imports.cjs', '.');
    expect(found).toEqual(
      expect.arrayContaining([
        { rule: 'no-cycle', from: 'core/graph-schema.ts', to: 'core/graph.ts' },
        { rule: 'no-cycle', from: 'activities/index.ts', to: 'workflows/enrollment.ts' },
        { rule: 'activities-not-to-workflows', from: 'activities/index.ts', to: 'workflows/enrollment.ts' },
        { rule: 'activities-not-to-temporal', from: 'activities/index.ts', to: 'temporal/starts.ts' },
      ]),
    );
    expect(found).toHaveLength(4);
  }, 30_000);

  it('a Node builtin reached from workflows/ through core/ fails the bundle lint; one behind a type-only import does not', async () => {
    const found = await violations('scripts/lint/workflow-bundle.cjs', 'workflows');
    expect(found).toEqual([{ rule: 'no-node-builtins-in-workflow-bundle', from: 'workflows/enrollment.ts', to: 'crypto' }]);
  }, 30_000);
});
