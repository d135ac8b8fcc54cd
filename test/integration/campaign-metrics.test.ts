import { randomUUID } from 'node:crypto';
import { QueryTypes } from 'sequelize';
import { startEmailStack, type EmailStack } from '../helpers/email-stack';
import { createList, seedContacts, sendNow, waitForCampaign } from '../helpers/campaigns';
import { createTestWorkspace } from '../helpers/workspaces';

// Metrics come from counters a trigger on message_events moves, whoever stores the event. Opens and
// clicks are inserted here as the tracking endpoints store them (classified), deliveries and bounces as
// provider notifications do.
let stack: EmailStack;
beforeAll(async () => {
  stack = await startEmailStack({ overrides: { RATE_LIMIT_PER_SECOND: '1000' } });
});
afterAll(() => stack.close());

jest.setTimeout(120_000);

interface Event {
  type: string;
  classification?: string;
  linkRole?: string;
  bounceType?: string;
}

async function insertEvents(workspaceId: string, events: Array<[messageId: string, event: Event]>): Promise<void> {
  await stack.api.db.query(
    `INSERT INTO message_events (id, workspace_id, message_id, type, classification, link_role, link_url, link_id, bounce_type)
     SELECT gen_random_uuid(), $1, message_id, type, classification, link_role,
       CASE WHEN type = 'click' THEN 'https://example.com/x' END, CASE WHEN type = 'click' THEN 'l0' END, bounce_type
     FROM unnest($2::uuid[], $3::text[], $4::text[], $5::text[], $6::text[]) AS e (message_id, type, classification, link_role, bounce_type)`,
    {
      bind: [
        workspaceId,
        events.map(([id]) => id),
        events.map(([, event]) => event.type),
        events.map(([, event]) => event.classification ?? null),
        events.map(([, event]) => event.linkRole ?? null),
        events.map(([, event]) => event.bounceType ?? null),
      ],
    },
  );
}

describe('campaign metrics', () => {
  it('count human opens and clicks only, unique per message, content clicks without logo and images, with rates as fractions', async () => {
    const workspace = await createTestWorkspace(stack.api, { domain: true });
    const { call } = workspace;
    const from = `a@${workspace.domain}`;
    const listId = await createList(call);
    const prefix = `metrics-${workspace.workspaceId.slice(0, 8)}`;
    await seedContacts(stack.api.db, workspace.workspaceId, { count: 6, prefix, listId });
    const created = await call('POST', '/campaigns', { name: 'Metrics', fromAddress: from, listId, subject: 'S', html: '<p><a href="https://example.com/x">x</a></p>' });
    const id = (created.body as { id: string }).id;
    await sendNow(call, id);
    await waitForCampaign(call, id, ['sent']);

    const rows = await stack.api.db.query<{ id: string; to: string }>(
      'SELECT id, to_addresses[1] AS to FROM messages WHERE workspace_id = $1 AND campaign_id = $2 ORDER BY to_addresses[1]',
      { bind: [workspace.workspaceId, id], type: QueryTypes.SELECT },
    );
    const [a, b, c, d, e, f] = rows.map((row) => row.id);
    // One statement with many events (as a tracking flush), then single ones (as notifications arrive).
    await insertEvents(workspace.workspaceId, [
      [a, { type: 'delivered' }], [b, { type: 'delivered' }], [c, { type: 'delivered' }], [d, { type: 'delivered' }], [e, { type: 'delivered' }],
      [a, { type: 'open', classification: 'human' }], [a, { type: 'open', classification: 'human' }],
      [a, { type: 'click', classification: 'human', linkRole: 'cta' }], [a, { type: 'click', classification: 'human', linkRole: 'cta' }],
      [b, { type: 'open', classification: 'human' }], [b, { type: 'click', classification: 'human', linkRole: 'logo' }],
      [c, { type: 'open', classification: 'prefetch' }], [c, { type: 'click', classification: 'bot', linkRole: 'text' }],
    ]);
    await insertEvents(workspace.workspaceId, [[d, { type: 'unsubscribe' }]]);
    await insertEvents(workspace.workspaceId, [[e, { type: 'complaint' }]]);
    await insertEvents(workspace.workspaceId, [[f, { type: 'bounce', bounceType: 'hard' }]]);

    const expected = {
      recipients: 6,
      delivered: 5,
      uniqueOpens: 2,
      uniqueClicks: 2,
      contentClicks: 2,
      unsubscribes: 1,
      hardBounces: 1,
      softBounces: 0,
      openRate: 0.4,
      clickRate: 0.4,
      clickToOpenRate: 1,
      unsubscribeRate: 0.2,
      bounceRate: 1 / 6,
    };
    expect((await call('GET', `/campaigns/${id}`)).body).toMatchObject({ metrics: expected, progress: { sent: 6, failed: 0 } });
    expect((await call('GET', '/campaigns?metrics=1')).body).toMatchObject({ campaigns: [{ id, metrics: expected }] });
    // The campaign's one link (tracked as l0 when it was sent): two people clicked it, a scanner once.
    expect((await call('GET', `/campaigns/${id}/links`)).body).toMatchObject({
      data: [{ url: 'https://example.com/x', uniqueClicks: 2, totalClicks: 3, machineClicks: 1 }],
    });
    expect((await call('GET', `/campaigns/${randomUUID()}/links`)).status).toBe(404);
  });

  it("two concurrent first opens of one message count one unique open; other campaigns' and transactional events count nowhere", async () => {
    const workspace = await createTestWorkspace(stack.api, { domain: true });
    const { call } = workspace;
    const from = `a@${workspace.domain}`;
    const listId = await createList(call);
    await seedContacts(stack.api.db, workspace.workspaceId, { count: 2, prefix: `race-${workspace.workspaceId.slice(0, 8)}`, listId });
    const created = await call('POST', '/campaigns', { name: 'Race', fromAddress: from, listId, subject: 'S', text: 'T' });
    const id = (created.body as { id: string }).id;
    await sendNow(call, id);
    await waitForCampaign(call, id, ['sent']);
    const [message] = await stack.api.db.query<{ id: string }>('SELECT id FROM messages WHERE campaign_id = $1 LIMIT 1', { bind: [id], type: QueryTypes.SELECT });

    const db = stack.api.db;
    const open = `INSERT INTO message_events (id, workspace_id, message_id, type, classification) VALUES (gen_random_uuid(), $1, $2, 'open', 'human')`;
    const first = await db.transaction();
    await db.query(open, { bind: [workspace.workspaceId, message.id], transaction: first });
    // The second waits on the first's row in campaign_engagements, then finds it taken.
    const second = db.transaction(async (transaction) => db.query(open, { bind: [workspace.workspaceId, message.id], transaction }));
    await new Promise((resolve) => setTimeout(resolve, 300));
    await first.commit();
    await second;

    const transactional = await call('POST', '/emails', { from, to: 'other@example.org', subject: 'T', text: 'T', idempotencyKey: `tx-${randomUUID()}` });
    await insertEvents(workspace.workspaceId, [[(transactional.body as { id: string }).id, { type: 'open', classification: 'human' }]]);

    const metrics = ((await call('GET', `/campaigns/${id}`)).body as { metrics: Record<string, number> }).metrics;
    expect(metrics).toMatchObject({ uniqueOpens: 1, recipients: 2 });
    const [counted] = await db.query<{ opens: string; campaigns: string }>(
      'SELECT sum(opens) AS opens, count(DISTINCT campaign_id) AS campaigns FROM campaign_counters WHERE workspace_id = $1',
      { bind: [workspace.workspaceId], type: QueryTypes.SELECT },
    );
    expect({ opens: Number(counted.opens), campaigns: Number(counted.campaigns) }).toEqual({ opens: 2, campaigns: 1 });
  });
});
