import { MockActivityEnvironment } from '@temporalio/testing';
import { DefaultLogger } from '@temporalio/worker';
import { QueryTypes } from 'sequelize';
import { campaignFeedSettings, createCampaignActivities, type FeedInput, type FeedResult } from '../../activities/campaigns';
import { dueRecipients } from '../../db/repositories/campaign-feed';
import { takeSnapshot } from '../../db/repositories/campaign-snapshot';
import { createList, seedContacts } from '../helpers/campaigns';
import { type EmailStack, startEmailStack } from '../helpers/email-stack';
import { createTestWorkspace } from '../helpers/workspaces';

let stack: EmailStack;
beforeAll(async () => {
  stack = await startEmailStack({ overrides: { RATE_LIMIT_PER_SECOND: '1000' } });
});
afterAll(() => stack.close());

jest.setTimeout(60_000);

const HOUR = 3_600_000;
const MINUTE = 60_000;

/**
 * Zones by offset (`Etc/GMT+3` is UTC-3), so the expected moments follow from the offsets alone. The
 * campaign starts 90 minutes ago at the UTC time of an hour ago, so: UTC's recipient was due an hour ago;
 * UTC-3's is due in about 2 hours; UTC+3's moment passed 4 hours ago, so it is due tomorrow, in about 20.
 * The workspace's zone (UTC-3) stands in for a missing or unknown zone.
 */
describe('a campaign sent at a local time of day', () => {
  it("fixes each recipient's moment in their zone at the snapshot, and the feed writes only those due", async () => {
    const workspace = await createTestWorkspace(stack.api, { plan: 'pro', domain: true });
    await stack.api.db.query("UPDATE workspaces SET timezone = 'Etc/GMT+3' WHERE id = $1", { bind: [workspace.workspaceId] });
    const { domain, call } = workspace;
    const listId = await createList(call);
    const zones = ['UTC', 'Etc/GMT+3', 'Etc/GMT-3', 'Mars/Olympus_Mons', undefined];
    const contacts = await seedContacts(stack.api.db, workspace.workspaceId, {
      count: zones.length,
      prefix: `local-${workspace.workspaceId.slice(0, 8)}`,
      listId,
      attributes: (i) => (zones[i] ? { timezone: zones[i] } : {}),
    });

    const now = Date.now();
    const start = new Date(now - 90 * MINUTE);
    const at = new Date(Math.floor((now - HOUR) / MINUTE) * MINUTE);
    const atText = at.toISOString().slice(11, 16);
    const created = await call('POST', '/campaigns', { name: 'Morning', fromAddress: `news@${domain}`, listId, subject: 'Hi', html: '<p>Hi</p>', sendAtLocalTime: atText });
    expect(created).toMatchObject({ status: 201, body: { sendAtLocalTime: atText } });
    const id = (created.body as { id: string }).id;
    expect(await call('PATCH', `/campaigns/${id}`, { sendAtLocalTime: '24:00' })).toMatchObject({ status: 422, body: { error: { fieldErrors: { sendAtLocalTime: expect.any(Array) } } } });
    // Scheduled past the token window, then moved to the start this test simulates.
    expect(await call('POST', `/campaigns/${id}/send`, { scheduledAt: new Date(now + 2 * 86_400_000).toISOString() })).toMatchObject({ status: 202, body: { status: 'scheduled' } });
    await stack.api.db.query('UPDATE campaigns SET scheduled_at = $2 WHERE id = $1', { bind: [id, start] });
    expect(await takeSnapshot(stack.api.db, workspace.workspaceId, id, start)).toEqual({ state: 'ready', recipients: zones.length });

    const rows = await stack.api.db.query<{ contact_id: string; position: number; send_after: Date }>(
      'SELECT contact_id, position, send_after FROM campaign_recipients WHERE campaign_id = $1 ORDER BY position',
      { bind: [id], type: QueryTypes.SELECT },
    );
    const dueOf = (i: number) => (rows.find((row) => row.contact_id === contacts[i].id) as { send_after: Date }).send_after.getTime();
    expect(dueOf(0)).toBe(at.getTime());
    expect(dueOf(1)).toBe(at.getTime() + 3 * HOUR);
    expect(dueOf(2)).toBe(at.getTime() - 3 * HOUR + 24 * HOUR);
    // Unknown and missing zones take the workspace's.
    expect(dueOf(3)).toBe(at.getTime() + 3 * HOUR);
    expect(dueOf(4)).toBe(at.getTime() + 3 * HOUR);
    // Numbered in the order they come due.
    expect(rows.map((row) => row.send_after.getTime())).toEqual([...rows.map((row) => row.send_after.getTime())].sort((a, b) => a - b));
    expect(rows[0].contact_id).toBe(contacts[0].id);

    expect(await dueRecipients(stack.api.db, id, { after: 0, upTo: zones.length })).toEqual({ upTo: 1, nextAt: new Date(at.getTime() + 3 * HOUR) });

    // The feed writes the one recipient due, and once it is sent, hands back the moment of the next.
    const activities = createCampaignActivities({ db: stack.api.db, settings: { ...campaignFeedSettings(stack.api.config), sliceMs: 20_000, pollMs: 100 } });
    const fed = await new MockActivityEnvironment(undefined, { logger: new DefaultLogger('ERROR') }).run<[FeedInput], FeedResult, typeof activities.feedCampaign>(
      activities.feedCampaign,
      { workspaceId: workspace.workspaceId, campaignId: id, cursor: 0 },
    );
    expect(fed).toEqual({ cursor: 1, state: 'waiting', status: 'sending', nextAt: new Date(at.getTime() + 3 * HOUR).toISOString() });
    const written = await stack.api.db.query<{ contact_id: string; status: string }>('SELECT contact_id, status FROM messages WHERE campaign_id = $1', {
      bind: [id],
      type: QueryTypes.SELECT,
    });
    expect(written).toEqual([{ contact_id: contacts[0].id, status: 'sent' }]);
    expect(await call('POST', `/campaigns/${id}/cancel`)).toMatchObject({ status: 200, body: { status: 'canceled' } });
  });
});
