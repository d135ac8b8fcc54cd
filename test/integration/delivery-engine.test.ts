import { randomUUID } from 'node:crypto';
import type { Client } from '@temporalio/client';
import { connectTemporal } from '../../temporal/connection';
import { QueryTypes } from 'sequelize';
import { minimumClaim } from '../../core/dispatch';
import { claimFairly, countInFlight } from '../../db/repositories/dispatch-queue';
import { startEmailStack, type EmailStack } from '../helpers/email-stack';
import { createTestWorkspace } from '../helpers/workspaces';
import { queueMessages } from '../helpers/factories';

// The delivery engine as shipped: the dispatcher hands Temporal only what can make progress, fairly and
// most urgent first. The stack's database is this file's own.
let stack: EmailStack;
let client: Client;
beforeAll(async () => {
  stack = await startEmailStack({ overrides: { SEND_RATE_PER_SECOND: '50', SEND_IN_FLIGHT_MIN: '10', SEND_LEAD_TIME_MS: '200' } });
  client = await connectTemporal(stack.api.config);
});
afterAll(async () => {
  await client.connection.close();
  await stack.close();
});

jest.setTimeout(120_000);

async function sender(plan: 'free' | 'pro' = 'free') {
  const workspace = await createTestWorkspace(stack.api, { plan, domain: true });
  const { domain } = workspace;
  return { ...workspace, from: `a@${domain}` };
}

async function sentAt(messageIds: readonly string[]): Promise<Map<string, number>> {
  const rows = await stack.api.db.query<{ message_id: string; at: number }>(
    `SELECT message_id, EXTRACT(EPOCH FROM created_at) * 1000 AS at FROM message_events WHERE type = 'sent' AND message_id = ANY($1::uuid[])`,
    { bind: [messageIds], type: QueryTypes.SELECT },
  );
  return new Map(rows.map((row) => [row.message_id, Number(row.at)]));
}

async function until(check: () => Promise<boolean>, timeoutMs = 60_000): Promise<void> {
  for (const deadline = Date.now() + timeoutMs; Date.now() < deadline; ) {
    if (await check()) return;
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  throw new Error('condition not met in time');
}

describe('fair dispatch between workspaces', () => {
  it('three workspaces with backlogs of 60, 20 and 5 each get a share of a round, weighted by plan', async () => {
    await stack.stopDispatcher();
    const [big, middle, small] = [await sender('free'), await sender('free'), await sender('pro')];
    try {
      await queueMessages(stack.api.db, big.workspaceId, { kind: 'transactional', count: 60, from: big.from });
      await queueMessages(stack.api.db, middle.workspaceId, { kind: 'transactional', count: 20, from: middle.from });
      await queueMessages(stack.api.db, small.workspaceId, { kind: 'transactional', count: 5, from: small.from });
      const claimed = await claimFairly(stack.api.db, { channel: 'email', dispatchClass: 'transactional', bound: 30, leaseMs: 60_000 });
      const per = (workspaceId: string) => claimed.filter((message) => message.workspaceId === workspaceId).length;
      expect(claimed).toHaveLength(30);
      // Global FIFO would have given all 30 to the workspace that queued first; here the pro one (weight 4)
      // takes all it has, and the two free ones split the rest evenly.
      expect(per(small.workspaceId)).toBe(5);
      expect(Math.abs(per(big.workspaceId) - per(middle.workspaceId))).toBeLessThanOrEqual(1);
      // The bound holds: a second round finds no room.
      expect((await countInFlight(stack.api.db, 'email')).transactional).toBeGreaterThanOrEqual(30);
      expect(await claimFairly(stack.api.db, { channel: 'email', dispatchClass: 'transactional', bound: 30, leaseMs: 60_000 })).toEqual([]);
    } finally {
      // Out of the way of the other tests: these were only ever claimed.
      await stack.api.db.query(`UPDATE messages SET status = 'canceled', dispatch_lease_until = NULL WHERE workspace_id = ANY($1::uuid[])`, {
        bind: [[big.workspaceId, middle.workspaceId, small.workspaceId]],
      });
      stack.startDispatcher();
    }
  });

  it('bulk with less than half a batch of room claims nothing; with that much free it claims the room', async () => {
    await stack.stopDispatcher();
    const workspace = await sender('pro');
    try {
      await queueMessages(stack.api.db, workspace.workspaceId, { kind: 'campaign', count: 40, from: workspace.from, campaignId: randomUUID() });
      const inFlight = (await countInFlight(stack.api.db, 'email')).bulk;
      const claim = (room: number) =>
        claimFairly(stack.api.db, { channel: 'email', dispatchClass: 'bulk', bound: inFlight + room, leaseMs: 60_000, minimum: minimumClaim('bulk', 50) });
      expect(await claim(24)).toEqual([]);
      expect(await claim(25)).toHaveLength(25);
    } finally {
      await stack.api.db.query(`UPDATE messages SET status = 'canceled', dispatch_lease_until = NULL WHERE workspace_id = $1`, { bind: [workspace.workspaceId] });
      stack.startDispatcher();
    }
  });

  it('when one slot frees at a time, a light workspace still gets turns beside a heavy one (not always the heaviest)', async () => {
    await stack.stopDispatcher();
    const [heavy, light] = [await sender('pro'), await sender('free')];
    try {
      await queueMessages(stack.api.db, heavy.workspaceId, { kind: 'transactional', count: 100, from: heavy.from });
      const [mine] = await queueMessages(stack.api.db, light.workspaceId, { kind: 'transactional', count: 1, from: light.from });
      let rounds = 0;
      for (let picked = ''; picked !== mine && rounds < 60; rounds += 1) {
        const bound = (await countInFlight(stack.api.db, 'email')).transactional + 1;
        const [claimed] = await claimFairly(stack.api.db, { channel: 'email', dispatchClass: 'transactional', bound, leaseMs: 60_000 });
        picked = claimed.messageId;
        // As if that one were sent at once: the next round again has exactly one slot.
        if (picked !== mine) await stack.api.db.query(`UPDATE messages SET status = 'sent', dispatch_lease_until = NULL WHERE id = $1`, { bind: [picked] });
      }
      // The light workspace's chance is 1 in 5 per slot (weights 1 and 4): 60 misses in a row are one in a million.
      expect(rounds).toBeLessThan(60);
    } finally {
      await stack.api.db.query(`UPDATE messages SET status = 'canceled', dispatch_lease_until = NULL WHERE workspace_id = ANY($1::uuid[]) AND status = 'queued'`, {
        bind: [[heavy.workspaceId, light.workspaceId]],
      });
      stack.startDispatcher();
    }
  });

  it("a workspace's one email is sent long before another workspace's backlog is done", async () => {
    const [flooding, quiet] = [await sender(), await sender()];
    const backlog = await queueMessages(stack.api.db, flooding.workspaceId, { kind: 'transactional', count: 200, from: flooding.from });
    await until(async () => (await sentAt(backlog)).size > 0);
    const response = await stack.api.as(quiet.apiKey)('POST', '/emails', { from: quiet.from, to: 'quiet@example.org', subject: 'Reset', text: 'T', idempotencyKey: `quiet-${randomUUID()}` });
    const id = (response.body as { id: string }).id;
    await stack.waitForStatus(quiet.workspaceId, id, ['sent']);
    const floodSent = (await sentAt(backlog)).size;
    expect(floodSent).toBeLessThan(backlog.length);
    await until(async () => (await sentAt(backlog)).size === backlog.length, 90_000);
  });
});

describe('priority', () => {
  it('a transactional send overtakes a campaign batch queued before it', async () => {
    const workspace = await sender();
    const campaign = await queueMessages(stack.api.db, workspace.workspaceId, { kind: 'campaign', count: 300, from: workspace.from, campaignId: randomUUID() });
    await until(async () => (await sentAt(campaign)).size > 0);
    const response = await stack.api.as(workspace.apiKey)('POST', '/emails', { from: workspace.from, to: 'urgent@example.org', subject: 'Code', text: 'T', idempotencyKey: `urgent-${randomUUID()}` });
    const id = (response.body as { id: string }).id;
    await stack.waitForStatus(workspace.workspaceId, id, ['sent']);
    expect((await sentAt(campaign)).size).toBeLessThan(campaign.length);
    await until(async () => (await sentAt(campaign)).size === campaign.length, 90_000);
  });
});

describe('bulk batches', () => {
  it('a campaign of 1,000 goes out in batch workflows of at most 500, at most 50 history events per 1,000 messages, findable by workspace', async () => {
    const workspace = await sender('pro');
    const campaignId = randomUUID();
    const ids = await queueMessages(stack.api.db, workspace.workspaceId, { kind: 'campaign', count: 1_000, from: workspace.from, campaignId });
    await until(async () => (await sentAt(ids)).size === ids.length, 90_000);
    expect(stack.sink.received.filter((mail) => mail.recipients[0]?.startsWith('campaign-') && mail.from === workspace.from)).toHaveLength(1_000);

    const rows = await stack.api.db.query<{ workflow_id: string; n: string }>(
      'SELECT workflow_id, count(*) AS n FROM messages WHERE workspace_id = $1 GROUP BY workflow_id',
      { bind: [workspace.workspaceId], type: QueryTypes.SELECT },
    );
    expect(rows.every((row) => row.workflow_id.startsWith('send-batch:') && Number(row.n) <= 500)).toBe(true);
    let events = 0;
    for (const row of rows) events += (await client.workflow.getHandle(row.workflow_id).fetchHistory()).events?.length ?? 0;
    expect((events / ids.length) * 1_000).toBeLessThanOrEqual(50);

    // Operators find them in the Temporal UI by workspace (visibility is eventually consistent).
    let listed: string[] = [];
    await until(async () => {
      listed = [];
      for await (const execution of client.workflow.list({ query: `WorkspaceId = "${workspace.workspaceId}"` })) listed.push(execution.workflowId);
      return listed.length === rows.length;
    }, 20_000);
    expect(listed.sort()).toEqual(rows.map((row) => row.workflow_id).sort());
  });
});
