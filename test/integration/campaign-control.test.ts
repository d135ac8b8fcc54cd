import type { Client } from '@temporalio/client';
import { connectTemporal } from '../../temporal/connection';
import { pino } from 'pino';
import { QueryTypes } from 'sequelize';
import { createReconcilerActivities } from '../../activities/reconciler';
import { createSendObserver } from '../../activities/send-observer';
import { campaignWorkflowId } from '../../core/ids';
import { startEmailStack, type EmailStack } from '../helpers/email-stack';
import { createList, messageStatuses, seedContacts, sendNow, waitForCampaign } from '../helpers/campaigns';
import { createTestWorkspace } from '../helpers/workspaces';
import { temporalPorts } from '../../temporal/activity-ports';

// Stopping a campaign while it sends, through the real stack, with a provider slow enough (20/s) that
// a campaign of a hundred or two is still going when the test acts. The feed looks at its campaign every
// 100 ms here (a second in production).
let stack: EmailStack;
let temporal: Client;
beforeAll(async () => {
  stack = await startEmailStack({
    overrides: {
      RATE_LIMIT_PER_SECOND: '1000',
      SEND_RATE_PER_SECOND: '20',
      CAMPAIGN_AUTO_PAUSE_AFTER: '5',
      CAMPAIGN_AUTO_PAUSE_BOUNCE_RATE: '0.3',
    },
    activities: { campaignTiming: { pollMs: 100 } },
  });
  temporal = await connectTemporal(stack.api.config);
});
afterAll(async () => {
  await temporal.connection.close();
  await stack.close();
});

jest.setTimeout(180_000);

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

async function sendingCampaign(count: number) {
  const workspace = await createTestWorkspace(stack.api, { plan: 'pro', domain: true });
  const { call } = workspace;
  const from = `a@${workspace.domain}`;
  const listId = await createList(call);
  const prefix = `control-${workspace.workspaceId.slice(0, 8)}`;
  const contacts = await seedContacts(stack.api.db, workspace.workspaceId, { count, prefix, listId });
  const created = await call('POST', '/campaigns', { name: 'Control', fromAddress: from, listId, subject: 'S', text: 'T' });
  const id = (created.body as { id: string }).id;
  expect(await sendNow(call, id)).toMatchObject({ status: 202 });
  const received = () => stack.sink.received.filter((mail) => mail.recipients[0]?.startsWith(`${prefix}-`)).map((mail) => mail.recipients[0]);
  const until = async (atLeast: number) => {
    for (const deadline = Date.now() + 60_000; received().length < atLeast && Date.now() < deadline; ) await sleep(50);
  };
  /** Waits until no more mail arrives for a second; returns what arrived. */
  const settled = async () => {
    let seen = -1;
    while (seen !== received().length) {
      seen = received().length;
      await sleep(1_000);
    }
    return received();
  };
  return { ...workspace, call, id, contacts, received, until, settled };
}

describe('campaign control while sending', () => {
  it('cancel: the messages not yet sent become canceled, nothing more goes, and their quota is given back', async () => {
    const campaign = await sendingCampaign(200);
    await campaign.until(20);
    expect(await campaign.call('POST', `/campaigns/${campaign.id}/cancel`)).toMatchObject({ status: 200, body: { status: 'canceled' } });
    const received = await campaign.settled();
    expect(received.length).toBeLessThan(200);
    expect(new Set(received).size).toBe(received.length);

    const statuses = await messageStatuses(stack.api.db, campaign.workspaceId, campaign.id);
    expect(statuses.queued ?? 0).toBe(0);
    expect(statuses.sending ?? 0).toBe(0);
    expect(statuses.sent).toBe(received.length);
    const detail = (await campaign.call('GET', `/campaigns/${campaign.id}`)).body as { progress: { canceled: number; sent: number } };
    // Canceled: the messages that waited in the outbox, and the recipients never written to it.
    const written = Object.values(statuses).reduce((sum, n) => sum + n, 0);
    expect(detail.progress).toMatchObject({ sent: received.length, canceled: (statuses.canceled ?? 0) + (200 - written) });
    expect(detail.progress.sent + detail.progress.canceled).toBe(200);
    expect((await campaign.call('GET', '/usage')).body).toMatchObject({ messages: { used: received.length } });
  });

  it('pause: sending stops within moments, the waiting messages are held back; resume sends the rest, each recipient once', async () => {
    const campaign = await sendingCampaign(120);
    await campaign.until(15);
    const atPause = campaign.received().length;
    expect(await campaign.call('POST', `/campaigns/${campaign.id}/pause`)).toMatchObject({ status: 200, body: { status: 'paused', pausedReason: null } });
    const whilePaused = await campaign.settled();
    // Only what was already in a provider call or about to be claimed.
    expect(whilePaused.length - atPause).toBeLessThanOrEqual(15);
    await sleep(1_000);
    expect(campaign.received()).toHaveLength(whilePaused.length);
    const statuses = await messageStatuses(stack.api.db, campaign.workspaceId, campaign.id);
    expect(statuses).toEqual({ sent: whilePaused.length });

    expect(await campaign.call('POST', `/campaigns/${campaign.id}/resume`)).toMatchObject({ status: 200, body: { status: 'sending' } });
    await waitForCampaign(campaign.call, campaign.id, ['sent']);
    const all = campaign.received();
    expect(all.sort()).toEqual(campaign.contacts.map((contact) => contact.address).sort());
  });

  it('a campaign whose first sends bounce pauses itself, says why, and goes on (without pausing again) when resumed', async () => {
    const campaign = await sendingCampaign(100);
    await campaign.until(6);
    // Every message sent so far bounced: far above the 30% threshold.
    await stack.api.db.query(
      `INSERT INTO message_events (id, workspace_id, message_id, type, bounce_type)
       SELECT gen_random_uuid(), workspace_id, id, 'bounce', 'hard' FROM messages WHERE campaign_id = $1 AND status = 'sent'`,
      { bind: [campaign.id] },
    );
    const paused = await waitForCampaign(campaign.call, campaign.id, ['paused'], 10_000);
    expect(paused.pausedReason).toMatch(/^hard bounce rate \d+(\.\d+)?% over \d+ sends is above 30%$/);
    const held = await campaign.settled();
    expect(held.length).toBeLessThan(100);
    const [queued] = await stack.api.db.query<{ n: string }>("SELECT count(*) AS n FROM messages WHERE campaign_id = $1 AND status = 'queued'", {
      bind: [campaign.id],
      type: QueryTypes.SELECT,
    });
    expect(Number(queued.n)).toBe(0);

    await campaign.call('POST', `/campaigns/${campaign.id}/resume`);
    expect(await waitForCampaign(campaign.call, campaign.id, ['sent'])).toMatchObject({ status: 'sent', progress: { sent: 100 } });
    expect(new Set(campaign.received()).size).toBe(100);
  });

  it('a campaign whose workflow was terminated from the Temporal UI is restarted by the reconciler from its mark; each recipient gets one message', async () => {
    const campaign = await sendingCampaign(60);
    await campaign.until(10);
    await temporal.workflow.getHandle(campaignWorkflowId(campaign.id)).terminate('operator stopped it');
    const reconciler = createReconcilerActivities({
      db: stack.api.db,
      ...temporalPorts(temporal, stack.api.config.TASK_QUEUE_PREFIX),
      observer: createSendObserver(pino({ level: 'silent' })),
    });
    const round = { staleAfterMs: 0, limit: 100, recheckAfterMs: 60_000 };
    expect((await reconciler.reconcileCampaigns(round)).restarted).toBeGreaterThanOrEqual(1);
    expect((await temporal.workflow.getHandle(campaignWorkflowId(campaign.id)).describe()).status.name).toBe('RUNNING');
    await waitForCampaign(campaign.call, campaign.id, ['sent'], 60_000);
    const received = await campaign.settled();
    expect(received).toHaveLength(60);
    expect(new Set(received).size).toBe(60);
    // Ended: nothing left for the reconciler.
    const [left] = await stack.api.db.query<{ n: string }>("SELECT count(*) AS n FROM campaigns WHERE id = $1 AND status IN ('scheduled', 'sending', 'paused')", {
      bind: [campaign.id],
      type: QueryTypes.SELECT,
    });
    expect(Number(left.n)).toBe(0);
  });
});
