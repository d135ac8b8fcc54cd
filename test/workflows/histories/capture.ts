/**
 * `npm run histories:capture`: runs every scenario of scenarios.ts on a time-skipping test server with
 * its scripted activities and writes each history to test/workflows/histories/<name>.json, which
 * test/workflows/replay.test.ts replays against the workflow code as it is now.
 *
 * Capture again only to add a scenario, or after a change that is deliberately incompatible AND safe
 * (no run of the old shape can still be open anywhere); otherwise guard the change with `patched()` and
 * keep the old history, which is the point of the test.
 */
import { writeFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { randomUUID } from 'node:crypto';
import { temporal } from '@temporalio/proto';
import { Worker } from '@temporalio/worker';
import { startTimeSkipping } from '../../helpers/time-skipping';
import { type HistoryScenario, SCENARIOS } from './scenarios';
import type { TimeSkippingEnv } from '../../helpers/time-skipping';

/** The histories live beside the scenarios that record them: one folder, read by the replay test. */
const OUT = __dirname;

/**
 * protobufjs's own JSON form (enum names, 64-bit numbers as strings), which `History.fromObject` reads
 * back. Not the SDK's historyToJSON: with this install's two protobufjs versions it throws.
 */
function historyJson(history: temporal.api.history.v1.IHistory): string {
  const { History } = temporal.api.history.v1;
  return JSON.stringify(History.toObject(History.fromObject(history), { longs: String, enums: String, bytes: String }), null, 1);
}

async function capture(env: TimeSkippingEnv, scenario: HistoryScenario): Promise<string> {
  const taskQueue = `capture-${randomUUID()}`;
  const handle = await env.workflowClient.start(scenario.workflow, {
    taskQueue,
    workflowId: `${scenario.name}-${randomUUID()}`,
    args: scenario.args(taskQueue, (await env.now()).getTime()) as never,
  });
  for (const signal of scenario.signalsAtStart ?? []) await (typeof signal === 'string' ? handle.signal(signal) : handle.signal(signal.name, ...signal.args));
  const firstRun = env.workflowClient.getHandle(handle.workflowId, handle.firstExecutionRunId);
  const worker = await Worker.create({
    connection: env.nativeConnection,
    taskQueue,
    workflowsPath: require.resolve('../../../workflows'),
    activities: scenario.activities,
  });
  return worker.runUntil(async () => {
    await scenario.drive?.(env);
    if (scenario.continuesForever) {
      // Let the last skipped time's tasks finish before the history is cut.
      await new Promise((done) => setTimeout(done, 2_000));
      const history = historyJson(await firstRun.fetchHistory());
      await handle.terminate('history captured');
      return history;
    }
    // Waiting on the result through this client lets the server skip the workflow's timers.
    await handle.result().catch(() => undefined);
    return historyJson(await firstRun.fetchHistory());
  });
}

async function main(): Promise<void> {
  const only = process.argv.slice(2);
  const env = await startTimeSkipping();
  try {
    for (const scenario of SCENARIOS.filter((candidate) => only.length === 0 || only.includes(candidate.name))) {
      writeFileSync(resolve(OUT, `${scenario.name}.json`), `${await capture(env, scenario)}\n`);
      console.log(`captured ${scenario.name}`);
    }
  } finally {
    await env.close();
  }
}

main().catch((error: unknown) => {
  console.error(error);
  process.exit(1);
});
