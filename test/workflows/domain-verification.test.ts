import { randomUUID } from 'node:crypto';
import { Worker } from '@temporalio/worker';
import type { CheckDomainInput, CheckDomainResult } from '../../activities/domains';
import type { DomainStatus } from '../../core/domain-status';
import { domainVerificationWorkflowId } from '../../core/ids';
import { domainVerificationWorkflow, domainWatchdogWorkflow } from '../../workflows';
import { startTimeSkipping, type TimeSkippingEnv } from '../helpers/time-skipping';
import { workflowBundle } from '../../workers/workflow-bundle';

const MINUTE = 60 * 1000;
const HOUR = 60 * MINUTE;
const DAY = 24 * HOUR;

async function eventually(check: () => boolean): Promise<void> {
  for (let attempt = 0; attempt < 200 && !check(); attempt += 1) await new Promise((resolve) => setTimeout(resolve, 50));
}

interface Call extends CheckDomainInput {
  at: number;
}

/** A fake checkDomain whose verdicts the test scripts, one per call (the last one repeats). */
function scriptedChecks(env: TimeSkippingEnv, verdicts: DomainStatus[] | 'deleted') {
  const calls: Call[] = [];
  const checkDomain = async (input: CheckDomainInput): Promise<CheckDomainResult> => {
    calls.push({ ...input, at: (await env.now()).getTime() });
    if (verdicts === 'deleted') return { found: false };
    const status = verdicts[Math.min(calls.length - 1, verdicts.length - 1)];
    return { found: true, status, previousStatus: 'pending', detail: status === 'verified' ? null : 'records missing', records: [] };
  };
  return { calls, checkDomain };
}

describe('domain verification workflow', () => {
  let env: TimeSkippingEnv;
  beforeAll(async () => {
    env = await startTimeSkipping();
  });
  afterAll(() => env.close());

  const worker = async (activities: object) =>
    Worker.create({ connection: env.nativeConnection, taskQueue: env.taskQueue, workflowBundle: await workflowBundle(), activities });

  it('re-checks with backoff until the records check, then re-checks the verified domain every 24 hours', async () => {
    const script = scriptedChecks(env, ['pending', 'pending', 'pending', 'verified']);
    const w = await worker({ checkDomain: script.checkDomain, findUnwatchedDomains: async () => [] });
    await w.runUntil(async () => {
      const start = (await env.now()).getTime();
      const workflowId = `domain-verification:${randomUUID()}`;
      await env.workflowClient.start(domainVerificationWorkflow, {
        workflowId,
        taskQueue: env.taskQueue,
        args: [{ workspaceId: 'w', domainId: 'd', checkUntil: new Date(start + 72 * HOUR).toISOString() }],
      });
      // Checks at 0, +1 min, +3 min and +8 min (waits of 1, 2 and 5 minutes); the fourth passes.
      await env.sleep(9 * MINUTE);
      await eventually(() => script.calls.length >= 4);
      expect(script.calls.map((call) => call.failPending)).toEqual([false, false, false, false]);
      expect(script.calls.map((call) => call.windowEnded)).toEqual([false, false, false, false]);
      expect(script.calls.map((call) => Math.round((call.at - start) / MINUTE))).toEqual([0, 1, 3, 8]);

      // Verified: nothing more until a day later, then a drift check whose failure would count.
      await env.sleep(23 * HOUR);
      expect(script.calls).toHaveLength(4);
      await env.sleep(2 * HOUR);
      await eventually(() => script.calls.length >= 5);
      expect(script.calls[4].failPending).toBe(true);
      expect(script.calls[4].windowEnded).toBeUndefined();
      expect(script.calls[4].at - script.calls[3].at).toBeGreaterThanOrEqual(DAY);
      await env.workflowClient.getHandle(workflowId).terminate('test over');
    });
  });

  it('records never published: the claim expires after 72 hours, through one last check that fails it and says the window passed', async () => {
    const script = scriptedChecks(env, ['pending']);
    // Inside the window the domain stays pending; the last check is the one that may fail it (activities/domains.ts).
    const checkDomain = async (input: CheckDomainInput) => {
      const result = await script.checkDomain(input);
      return result.found ? { ...result, status: input.failPending ? ('failed' as const) : ('pending' as const) } : result;
    };
    const w = await worker({ checkDomain, findUnwatchedDomains: async () => [] });
    await w.runUntil(async () => {
      const start = (await env.now()).getTime();
      const handle = await env.workflowClient.start(domainVerificationWorkflow, {
        workflowId: `domain-verification:${randomUUID()}`,
        taskQueue: env.taskQueue,
        args: [{ workspaceId: 'w', domainId: 'd', checkUntil: new Date(start + 72 * HOUR).toISOString() }],
      });
      await handle.result();
      const last = script.calls.at(-1);
      expect(last).toMatchObject({ failPending: true, windowEnded: true });
      expect(script.calls.filter((call) => call.failPending || call.windowEnded)).toHaveLength(1);
      expect((last?.at ?? 0) - start).toBeGreaterThanOrEqual(72 * HOUR);
      // Hourly once the backoff is spent: about 70 checks in three days, not thousands.
      expect(script.calls.length).toBeGreaterThan(60);
      expect(script.calls.length).toBeLessThan(90);
    });
  });

  it('drift: a verified domain that fails its daily check opens a new 72-hour window of checks', async () => {
    const script = scriptedChecks(env, ['verified', 'failed', 'failed', 'verified']);
    const w = await worker({ checkDomain: script.checkDomain, findUnwatchedDomains: async () => [] });
    await w.runUntil(async () => {
      const workflowId = `domain-verification:${randomUUID()}`;
      const handle = await env.workflowClient.start(domainVerificationWorkflow, {
        workflowId,
        taskQueue: env.taskQueue,
        args: [{ workspaceId: 'w', domainId: 'd' }],
      });
      await env.sleep(2 * DAY + MINUTE);
      await eventually(() => script.calls.length >= 3);
      // Day 1 verified, day 2 failed (drift, a check that counts), then at once a window check.
      expect(script.calls.slice(0, 3).map((call) => call.failPending)).toEqual([true, true, false]);
      const described = await env.workflowClient.getHandle(workflowId).describe();
      expect(described.runId).not.toBe(handle.firstExecutionRunId);
      // The records come back a minute later; the domain is watched daily again.
      await env.sleep(2 * MINUTE);
      await eventually(() => script.calls.length >= 4);
      await env.sleep(DAY + MINUTE);
      await eventually(() => script.calls.length >= 5);
      expect(script.calls[4].failPending).toBe(true);
      await env.workflowClient.getHandle(workflowId).terminate('test over');
    });
  });

  it('a deleted domain ends its verification', async () => {
    const script = scriptedChecks(env, 'deleted');
    const w = await worker({ checkDomain: script.checkDomain, findUnwatchedDomains: async () => [] });
    await w.runUntil(async () => {
      const handle = await env.workflowClient.start(domainVerificationWorkflow, {
        workflowId: `domain-verification:${randomUUID()}`,
        taskQueue: env.taskQueue,
        args: [{ workspaceId: 'w', domainId: 'd', checkUntil: new Date((await env.now()).getTime() + HOUR).toISOString() }],
      });
      await handle.result();
      expect(script.calls).toHaveLength(1);
    });
  });

  it('the watchdog starts a verification for an unwatched domain and leaves a running one alone', async () => {
    const domainId = randomUUID();
    const script = scriptedChecks(env, ['pending']);
    let sweeps = 0;
    const findUnwatchedDomains = async () => {
      sweeps += 1;
      return [{ id: domainId, workspaceId: 'w' }];
    };
    const w = await worker({ checkDomain: script.checkDomain, findUnwatchedDomains });
    await w.runUntil(async () => {
      const watchdogId = `domain-watchdog-${randomUUID()}`;
      await env.workflowClient.start(domainWatchdogWorkflow, { workflowId: watchdogId, taskQueue: env.taskQueue });
      await eventually(() => script.calls.length >= 1);
      const child = env.workflowClient.getHandle(domainVerificationWorkflowId(domainId));
      const first = await child.describe();
      expect(first.status.name).toBe('RUNNING');

      // An hour later the same domain is listed again: "already started" is skipped, the watchdog goes on.
      await env.sleep(HOUR + MINUTE);
      await eventually(() => sweeps >= 2);
      await env.sleep(MINUTE);
      expect((await env.workflowClient.getHandle(watchdogId).describe()).status.name).toBe('RUNNING');
      expect((await child.describe()).runId).toBe(first.runId);
      await env.workflowClient.getHandle(watchdogId).terminate('test over');
      await child.terminate('test over');
    });
  });
});
