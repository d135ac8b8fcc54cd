import { readdirSync, readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { temporal } from '@temporalio/proto';
import { Worker } from '@temporalio/worker';
import { SCENARIOS } from './histories/scenarios';
import { workflowBundle } from '../../workers/workflow-bundle';

const DIR = resolve(__dirname, 'histories');
const files = readdirSync(DIR).filter((file) => file.endsWith('.json'));

jest.setTimeout(120_000);

/**
 * Workflows already running in production replay their history on every worker restart: a change to a
 * workflow that takes another path for the same events (a new activity, a moved timer) fails them with a
 * non-determinism error. Each recorded history (histories/capture.ts) must still replay on the code as it
 * is; a deliberate change goes behind `patched()`.
 */
describe('workflow histories recorded from earlier code', () => {
  it('every scenario has a recorded history', () => {
    expect(files.map((file) => file.replace(/\.json$/, '')).sort()).toEqual(SCENARIOS.map((scenario) => scenario.name).sort());
  });

  it('each replays on the current workflow code without a non-determinism error', async () => {
    const histories = files.map((file) => ({ workflowId: file, history: temporal.api.history.v1.History.fromObject(JSON.parse(readFileSync(resolve(DIR, file), 'utf8'))) }));
    const failures: string[] = [];
    for await (const result of Worker.runReplayHistories({ workflowBundle: await workflowBundle(), replayName: 'recorded' }, histories)) {
      if (result.error) failures.push(`${result.workflowId}: ${result.error.message}`);
    }
    expect(failures).toEqual([]);
  });
});
