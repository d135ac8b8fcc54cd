import { randomUUID } from 'node:crypto';
import { Worker } from '@temporalio/worker';
import type { Activities } from '../../activities';
import type { FeedInput, FeedResult, SnapshotResult } from '../../activities/campaigns';
import type { CampaignStatus } from '../../core/campaigns';
import type { BatchDelivery } from '../../activities/delivery';
import { campaignWorkflow, cancelCampaignSignal, resumeCampaignSignal } from '../../workflows/campaign';
import { sendBatchWorkflow } from '../../workflows/send-batch';
import { startTimeSkipping, type TimeSkippingEnv } from '../helpers/time-skipping';
import { workflowBundle } from '../../workers/workflow-bundle';

const HOUR = 60 * 60_000;
const DAY = 24 * HOUR;

jest.setTimeout(120_000);

/** When the workflow closed, by its history (the test server's clock may run on to timers it canceled). */
async function closedAt(handle: { fetchHistory: () => Promise<{ events?: Array<{ eventTime?: { seconds?: unknown } | null }> | null }> }): Promise<number> {
  const { events } = await handle.fetchHistory();
  return Number(events?.at(-1)?.eventTime?.seconds ?? 0) * 1000;
}

async function eventually(check: () => boolean, what: string): Promise<void> {
  for (let attempt = 0; attempt < 400 && !check(); attempt += 1) await new Promise((resolve) => setTimeout(resolve, 25));
  if (!check()) throw new Error(`never: ${what}`);
}

/**
 * The campaign's database as the activities see it, in memory: its status (what the API writes), its
 * recipients, and the outbox. Writing a recipient that is already in the outbox is a message sent twice.
 */
class FakeCampaign {
  status: CampaignStatus = 'sending';
  readonly outbox = new Set<number>();
  /** The last page written: messages still waiting in the outbox, which a pause takes back. */
  private waiting: number[] = [];
  readonly duplicates: number[] = [];
  readonly snapshots: number[] = [];
  readonly feeds: FeedInput[] = [];
  holds = 0;
  /** When each feed ran, by the test server's clock. */
  readonly feedTimes: number[] = [];
  /** A local send time: recipients after `position` come due only at `at` (the test server's clock). */
  later?: { position: number; at: number };
  /** Runs before each feed, with the feed's number (1-based): the test changes the campaign there. */
  onFeed: (feed: number) => void = () => undefined;

  constructor(
    private readonly env: TimeSkippingEnv,
    readonly recipients: number,
    private readonly page: number,
  ) {}

  activities() {
    return {
      snapshotCampaign: async (): Promise<SnapshotResult> => {
        this.snapshots.push((await this.env.now()).getTime());
        return this.status === 'canceled' ? { state: 'stopped', status: 'canceled' } : { state: 'ready', recipients: this.recipients };
      },
      // One page per slice, as the real feed writes a page whenever the window has room.
      feedCampaign: async (input: FeedInput): Promise<FeedResult> => {
        this.feeds.push(input);
        const now = (await this.env.now()).getTime();
        this.feedTimes.push(now);
        this.onFeed(this.feeds.length);
        if (this.status === 'paused') return { cursor: input.cursor, state: 'paused', status: 'paused' };
        if (this.status !== 'sending') return { cursor: input.cursor, state: 'done', status: this.status };
        const notDue = this.later && now < this.later.at ? this.later : null;
        if (notDue && input.cursor >= notDue.position) {
          return { cursor: input.cursor, state: 'waiting', status: 'sending', nextAt: new Date(notDue.at).toISOString() };
        }
        const upTo = Math.min(this.recipients, input.cursor + this.page, notDue?.position ?? Number.POSITIVE_INFINITY);
        this.waiting = [];
        for (let position = input.cursor + 1; position <= upTo; position += 1) {
          if (this.outbox.has(position)) this.duplicates.push(position);
          this.outbox.add(position);
          this.waiting.push(position);
        }
        if (upTo < this.recipients) return { cursor: upTo, state: 'more', status: 'sending' };
        this.status = 'sent';
        return { cursor: upTo, state: 'done', status: 'sent' };
      },
      // A pause takes back the messages still waiting and rewinds to just before the first of them.
      holdCampaignMessages: async (): Promise<number | null> => {
        this.holds += 1;
        if (this.status !== 'paused') return null;
        const first = this.waiting[0];
        for (const position of this.waiting) this.outbox.delete(position);
        this.waiting = [];
        return first === undefined ? this.outbox.size : first - 1;
      },
    } satisfies Pick<Activities, 'snapshotCampaign' | 'feedCampaign' | 'holdCampaignMessages'>;
  }

  /** Every recipient is in the outbox exactly once. */
  expectEveryRecipientOnce(): void {
    expect(this.duplicates).toEqual([]);
    expect(this.outbox.size).toBe(this.recipients);
  }
}

describe('campaign workflow', () => {
  let env: TimeSkippingEnv;
  beforeAll(async () => {
    env = await startTimeSkipping();
  });
  afterAll(() => env.close());

  const workerFor = async (campaign: FakeCampaign, taskQueue = env.taskQueue) =>
    Worker.create({ connection: env.nativeConnection, taskQueue, workflowBundle: await workflowBundle(), activities: campaign.activities() });

  const start = (scheduledAt: Date | null, taskQueue = env.taskQueue) =>
    env.workflowClient.start(campaignWorkflow, {
      taskQueue,
      workflowId: `campaign:${randomUUID()}`,
      args: [{ workspaceId: randomUUID(), campaignId: randomUUID(), scheduledAt: scheduledAt?.toISOString() ?? null }],
    });

  it('a campaign scheduled two days ahead waits for its time, then takes one snapshot and writes every recipient once', async () => {
    const campaign = new FakeCampaign(env, 50, 10);
    const worker = await workerFor(campaign);
    await worker.runUntil(async () => {
      const sendAt = new Date((await env.now()).getTime() + 2 * DAY);
      const handle = await start(sendAt);
      await env.sleep(DAY);
      expect(campaign.snapshots).toEqual([]);
      expect(await handle.result()).toBe('sent');
      expect(campaign.snapshots).toHaveLength(1);
      expect(campaign.snapshots[0]).toBeGreaterThanOrEqual(sendAt.getTime());
      campaign.expectEveryRecipientOnce();
    });
  });

  it('sent at a local time: recipients not yet due are waited for with a timer, not polled', async () => {
    const campaign = new FakeCampaign(env, 30, 10);
    const worker = await workerFor(campaign);
    await worker.runUntil(async () => {
      const started = (await env.now()).getTime();
      campaign.later = { position: 20, at: started + 8 * HOUR };
      const handle = await start(null);
      expect(await handle.result()).toBe('sent');
      campaign.expectEveryRecipientOnce();
      // Two pages, the wait (one feed saying so), then the rest at its time: no feed in between.
      expect(campaign.feedTimes).toHaveLength(4);
      expect(campaign.feedTimes[3]).toBeGreaterThanOrEqual(started + 8 * HOUR);
      expect(campaign.feedTimes[2]).toBeLessThan(started + HOUR);
    });
  });

  it('canceled while it waits for recipients to come due: the wait ends at once', async () => {
    const campaign = new FakeCampaign(env, 30, 10);
    const worker = await workerFor(campaign);
    await worker.runUntil(async () => {
      const started = (await env.now()).getTime();
      campaign.later = { position: 10, at: started + 8 * HOUR };
      const handle = await start(null);
      await eventually(() => campaign.feeds.length === 2, 'the feed to say it waits');
      campaign.status = 'canceled';
      await handle.signal(cancelCampaignSignal);
      expect(await handle.result()).toBe('canceled');
      expect((await closedAt(handle)) - started).toBeLessThan(HOUR);
      expect(campaign.outbox.size).toBe(10);
    });
  });

  it('canceled before its time: the timer ends at once and nothing is snapshotted or written', async () => {
    const campaign = new FakeCampaign(env, 50, 10);
    const worker = await workerFor(campaign);
    await worker.runUntil(async () => {
      const started = (await env.now()).getTime();
      const handle = await start(new Date(started + 2 * DAY));
      campaign.status = 'canceled';
      await handle.signal(cancelCampaignSignal);
      expect(await handle.result()).toBe('canceled');
      expect((await closedAt(handle)) - started).toBeLessThan(HOUR);
      expect(campaign.snapshots).toEqual([]);
      expect(campaign.outbox.size).toBe(0);
    });
  });

  it('canceled during the send: it stops writing at the next slice', async () => {
    const campaign = new FakeCampaign(env, 100, 10);
    campaign.onFeed = (feed) => {
      if (feed === 4) campaign.status = 'canceled';
    };
    const worker = await workerFor(campaign);
    await worker.runUntil(async () => {
      const handle = await start(null);
      expect(await handle.result()).toBe('canceled');
      expect(campaign.outbox.size).toBe(30);
      expect(campaign.feeds).toHaveLength(4);
    });
  });

  it('paused: the waiting messages are taken back, nothing is written while it waits, and a resume goes on from the rewound cursor', async () => {
    const campaign = new FakeCampaign(env, 100, 10);
    campaign.onFeed = (feed) => {
      if (feed === 4) campaign.status = 'paused';
    };
    const worker = await workerFor(campaign);
    await worker.runUntil(async () => {
      const handle = await start(null);
      await eventually(() => campaign.holds >= 1, 'the pause holds the waiting messages');
      expect(campaign.outbox.size).toBe(20);
      // Hours pass: only the periodic look at the campaign (every 10 minutes), which finds it still paused.
      await env.sleep(3 * HOUR);
      expect(campaign.outbox.size).toBe(20);
      expect(campaign.feeds.length).toBeLessThanOrEqual(4 + 18);
      expect(campaign.feeds.slice(4).map((feed) => feed.cursor)).toEqual(campaign.feeds.slice(4).map(() => 20));

      campaign.status = 'sending';
      await handle.signal(resumeCampaignSignal);
      expect(await handle.result()).toBe('sent');
      campaign.expectEveryRecipientOnce();
    });
  });

  it('canceled while paused: the signal ends the wait at once', async () => {
    const campaign = new FakeCampaign(env, 100, 10);
    campaign.onFeed = (feed) => {
      if (feed === 2) campaign.status = 'paused';
    };
    const worker = await workerFor(campaign);
    await worker.runUntil(async () => {
      const handle = await start(null);
      await eventually(() => campaign.holds >= 1, 'paused');
      const paused = (await env.now()).getTime();
      campaign.status = 'canceled';
      await handle.signal(cancelCampaignSignal);
      expect(await handle.result()).toBe('canceled');
      expect((await closedAt(handle)) - paused).toBeLessThan(60_000);
    });
  });

  it('a worker restart in the middle resumes from the cursor, and no recipient is written twice', async () => {
    const campaign = new FakeCampaign(env, 200, 10);
    const taskQueue = `${env.taskQueue}-${randomUUID()}`;
    const fakes = campaign.activities();
    // The first worker's feeds are slow enough for it to be stopped part way.
    const slowFeeds = {
      ...fakes,
      feedCampaign: async (input: FeedInput) => {
        await new Promise((resolve) => setTimeout(resolve, 20));
        return fakes.feedCampaign(input);
      },
    };
    // No workflow cache, so no sticky queue: its workflow tasks go to the shared queue, as a dead process's do once the sticky timeout passes.
    const before = await Worker.create({
      connection: env.nativeConnection,
      taskQueue,
      workflowBundle: await workflowBundle(),
      activities: slowFeeds,
      maxCachedWorkflows: 0,
    });
    const running = before.run();
    const handle = await start(null, taskQueue);
    await eventually(() => campaign.outbox.size >= 60, 'part of the campaign written');
    before.shutdown();
    await running;
    expect(campaign.outbox.size).toBeLessThan(200);

    // Another worker picks the workflow up by replaying its history: the cursor is where it was.
    const after = await workerFor(campaign, taskQueue);
    await after.runUntil(async () => {
      expect(await handle.result()).toBe('sent');
    });
    campaign.expectEveryRecipientOnce();
    const cursors = campaign.feeds.map((feed) => feed.cursor);
    expect(cursors).toEqual(Array.from({ length: 20 }, (_, i) => i * 10));
  });

  it('a long campaign continues as new every 100 slices, carrying its cursor', async () => {
    const campaign = new FakeCampaign(env, 2_500, 10);
    const worker = await workerFor(campaign);
    await worker.runUntil(async () => {
      const handle = await start(null);
      expect(await handle.result()).toBe('sent');
      campaign.expectEveryRecipientOnce();
      const history = await env.workflowClient.getHandle(handle.workflowId).fetchHistory();
      // The last run holds only its own slices (50 of the 250), not the whole campaign's.
      expect(history.events?.length ?? 0).toBeLessThan(400);
    });
  });

  it('a provider that throttles a third of calls for a while still gets every message, and the campaign ends only when all are sent', async () => {
    const recipients = 40;
    const window = 20;
    const taskQueue = `${env.taskQueue}-${randomUUID()}`;
    const sendsTaskQueue = `${taskQueue}-sends`;
    const written: number[] = [];
    const sent = new Set<number>();
    let calls = 0;
    let throttled = 0;
    const unsent = () => written.filter((position) => !sent.has(position)).length;
    const fakes = {
      snapshotCampaign: async (): Promise<SnapshotResult> => ({ state: 'ready', recipients }),
      // As the real feed: whole pages while the window has room; done once every message is written and sent.
      feedCampaign: async (input: FeedInput): Promise<FeedResult> => {
        let cursor = input.cursor;
        while (cursor < recipients && window - unsent() >= 10) {
          for (let position = cursor + 1; position <= cursor + 10; position += 1) written.push(position);
          cursor += 10;
        }
        if (cursor >= recipients && unsent() === 0) return { cursor, state: 'done', status: 'sent' };
        await new Promise((resolve) => setTimeout(resolve, 50));
        return { cursor, state: 'more', status: 'sending' };
      },
      holdCampaignMessages: async () => null,
      markMessagesFailed: async () => {
        throw new Error('no message may fail');
      },
    };
    // Every third call of the first nine is throttled: the whole batch comes back to be retried later. A
    // message recorded sent is not sent again (the real activity finds its provider id).
    const deliverMessages = async (_workspaceId: string, messageIds: string[]): Promise<BatchDelivery> => {
      calls += 1;
      if (calls <= 9 && calls % 3 === 0) {
        throttled += 1;
        return { sent: 0, failed: 0, retry: messageIds };
      }
      for (const id of messageIds) sent.add(Number(id));
      return { sent: messageIds.length, failed: 0, retry: [] };
    };
    const workflows = await Worker.create({ connection: env.nativeConnection, taskQueue, workflowBundle: await workflowBundle(), activities: fakes });
    const sends = await Worker.create({ connection: env.nativeConnection, taskQueue: sendsTaskQueue, activities: { deliverMessages } });
    const workspaceId = randomUUID();
    let dispatched = 0;
    await sends.runUntil(
      workflows.runUntil(async () => {
        const handle = await start(null, taskQueue);
        // The dispatcher's part: written messages go out in batches of 5.
        const dispatcher = setInterval(() => {
          const batch = written.slice(dispatched, dispatched + 5);
          if (batch.length === 0) return;
          dispatched += batch.length;
          void env.workflowClient.start(sendBatchWorkflow, {
            taskQueue,
            workflowId: `send-batch:${randomUUID()}`,
            args: [{ workspaceId, messageIds: batch.map(String), sendsTaskQueue }],
          });
        }, 20);
        try {
          expect(await handle.result()).toBe('sent');
        } finally {
          clearInterval(dispatcher);
        }
      }),
    );
    expect(throttled).toBe(3);
    expect(written).toEqual(Array.from({ length: recipients }, (_, i) => i + 1));
    expect([...sent].sort((a, b) => a - b)).toEqual(written);
  });
});
