import { randomUUID } from 'node:crypto';
import { startEmailStack, type EmailStack } from '../helpers/email-stack';
import { createTestWorkspace } from '../helpers/workspaces';
import { queueMessages } from '../helpers/factories';
import { KEEPS_UP } from '../helpers/send-windows';

// The provider rate, as shipped: every send waits for its turn in the pacer shared through Redis
// (activities/pacing.ts), single sends and batches alike. 10/s: fast enough for a short test, slow
// enough that this machine's two cores (API, workers, Temporal and Postgres together) keep up with it
// even while something else runs beside the suite.
let stack: EmailStack;
beforeAll(async () => {
  stack = await startEmailStack({ overrides: { SEND_RATE_PER_SECOND: '10' } });
});
afterAll(() => stack.close());

jest.setTimeout(60_000);

async function until(check: () => boolean, timeoutMs: number): Promise<void> {
  for (const deadline = Date.now() + timeoutMs; Date.now() < deadline && !check(); ) await new Promise((resolve) => setTimeout(resolve, 100));
  if (!check()) throw new Error('condition not met in time');
}

async function sender() {
  const workspace = await createTestWorkspace(stack.api, { plan: 'pro', domain: true });
  return { ...workspace, from: `a@${workspace.domain}` };
}

describe('the provider rate', () => {
  it('holds under a backlog of single and bulk sends: never above 10/s over any 10 s window, keeping up with it', async () => {
    const workspace = await sender();
    // The provider's connections open first: sends paced while a connection is still being set up would
    // reach the sink together, which says nothing about the pacing.
    await queueMessages(stack.api.db, workspace.workspaceId, { kind: 'transactional', count: 10, from: workspace.from, toPrefix: 'warm' });
    await until(() => stack.sink.received.filter((mail) => mail.from === workspace.from).length === 10, 20_000);
    const before = stack.sink.received.length;
    await queueMessages(stack.api.db, workspace.workspaceId, { kind: 'transactional', count: 60, from: workspace.from, toPrefix: 'rate-single' });
    await queueMessages(stack.api.db, workspace.workspaceId, { kind: 'campaign', count: 90, from: workspace.from, toPrefix: 'rate-bulk', campaignId: randomUUID() });
    const ours = () => stack.sink.received.slice(before).filter((mail) => mail.from === workspace.from);
    await until(() => ours().length === 150, 40_000);
    const times = ours().map((mail) => mail.at).sort((a, b) => a - b);
    let busiest = 0;
    for (let i = 0, j = 0; i < times.length; i += 1) {
      while (times[i] - times[j] >= 10_000) j += 1;
      busiest = Math.max(busiest, i - j + 1);
    }
    // floor((10 s + 50 ms lateness) × 10/s) + 1 = 101 at the pacer; the sink reads its clock after the SMTP
    // exchange, whose jitter can bunch an arrival or two.
    expect(busiest).toBeLessThanOrEqual(103);
    // Steady state: the middle 80% (the first seconds are the pipeline filling, the last its draining).
    const [from, to] = [Math.floor(times.length * 0.1), Math.floor(times.length * 0.9)];
    const seconds = (times[to] - times[from]) / 1_000;
    expect((to - from) / seconds).toBeGreaterThanOrEqual(KEEPS_UP * 10);
    // The pacer's bound over this span, floor(span × 10/s) + 1, with the same allowance for the sink's jitter:
    // an arrival at either end read late or early by the SMTP exchange on a busy machine.
    expect(to - from).toBeLessThanOrEqual(Math.floor(seconds * 10) + 3);
  });
});
