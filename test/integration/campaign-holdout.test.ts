import { randomUUID } from 'node:crypto';
import { QueryTypes } from 'sequelize';
import { isHeldOut } from '../../core/campaign-holdout';
import { roundToCent } from '../../core/commerce/money';
import { takeSnapshot } from '../../db/repositories/campaign-snapshot';
import { recordOrder } from '../../services/order-recording';
import type { ApiResponse } from '../helpers/api-harness';
import { createList, seedContacts, type SeededContact, sendNow, waitForCampaign } from '../helpers/campaigns';
import { type EmailStack, startEmailStack } from '../helpers/email-stack';
import { createTestWorkspace } from '../helpers/workspaces';

// A campaign's holdout through the real API, workflow, dispatcher and workers (an SMTP sink as the provider),
// and the lift report against hand-computed figures.
let stack: EmailStack;
beforeAll(async () => {
  stack = await startEmailStack({ overrides: { RATE_LIMIT_PER_SECOND: '1000' } });
});
afterAll(() => stack.close());

jest.setTimeout(120_000);

const HOUR = 3_600_000;
const DAY = 24 * HOUR;
const AUDIENCE = 200;

type Call = (method: string, path: string, body?: unknown) => Promise<ApiResponse>;
const idOf = (response: ApiResponse) => (response.body as { id: string }).id;

async function sender() {
  const workspace = await createTestWorkspace(stack.api, { plan: 'pro', domain: true });
  const { domain } = workspace;
  return { ...workspace, from: `News <news@${domain}>` };
}

async function recipientsOf(campaignId: string) {
  return stack.api.db.query<{ contact_id: string; position: number; holdout: boolean; send_after: Date | null }>(
    'SELECT contact_id, position, holdout, send_after FROM campaign_recipients WHERE campaign_id = $1 ORDER BY position',
    { bind: [campaignId], type: QueryTypes.SELECT },
  );
}

/** The 200 contacts split as the pick decides for this campaign (core/campaign-holdout.ts). */
function split(campaignId: string, contacts: SeededContact[], percent: number) {
  const held = contacts.filter((contact) => isHeldOut(campaignId, contact.id, percent));
  const sent = contacts.filter((contact) => !isHeldOut(campaignId, contact.id, percent));
  // 200 contacts at p: the count is binomial; 4 standard deviations either side is a sane range.
  const sd = Math.sqrt(AUDIENCE * (percent / 100) * (1 - percent / 100));
  expect(Math.abs(held.length - AUDIENCE * (percent / 100))).toBeLessThan(4 * sd);
  return { held, sent };
}

describe('holdoutPercent on a draft', () => {
  it('is 0 unless given, an integer 0–50 on create and patch (51, -1 and 2.5 answer 422), and fixed once the campaign is sent', async () => {
    const { call, from, workspaceId } = await sender();
    const listId = await createList(call);
    await seedContacts(stack.api.db, workspaceId, { count: 2, prefix: `fixed-${workspaceId.slice(0, 8)}`, listId });
    const plain = await call('POST', '/campaigns', { name: 'Plain', listId });
    expect(plain).toMatchObject({ status: 201, body: { holdoutPercent: 0 } });
    for (const holdoutPercent of [51, -1, 2.5, '10']) {
      expect(await call('POST', '/campaigns', { name: 'Bad', holdoutPercent })).toMatchObject({ status: 422, body: { error: { fieldErrors: { holdoutPercent: expect.any(Array) } } } });
      expect(await call('PATCH', `/campaigns/${idOf(plain)}`, { holdoutPercent })).toMatchObject({ status: 422, body: { error: { fieldErrors: { holdoutPercent: expect.any(Array) } } } });
    }
    const created = await call('POST', '/campaigns', { name: 'Held', fromAddress: from, listId, subject: 'S', text: 'T', holdoutPercent: 50 });
    expect(created).toMatchObject({ status: 201, body: { holdoutPercent: 50 } });
    const id = idOf(created);
    expect(await call('PATCH', `/campaigns/${id}`, { holdoutPercent: 0 })).toMatchObject({ status: 200, body: { holdoutPercent: 0 } });
    expect(await call('PATCH', `/campaigns/${id}`, { holdoutPercent: 25 })).toMatchObject({ status: 200, body: { holdoutPercent: 25 } });
    expect((await call('GET', '/campaigns')).body).toMatchObject({ campaigns: expect.arrayContaining([expect.objectContaining({ id, holdoutPercent: 25 })]) });

    const later = new Date(Date.now() + HOUR).toISOString();
    expect(await call('POST', `/campaigns/${id}/send`, { scheduledAt: later })).toMatchObject({ status: 202, body: { status: 'scheduled' } });
    expect(await call('PATCH', `/campaigns/${id}`, { holdoutPercent: 10 })).toMatchObject({ status: 409, body: { error: 'conflict' } });
    expect((await call('GET', `/campaigns/${id}`)).body).toMatchObject({ holdoutPercent: 25 });
    expect(await call('POST', `/campaigns/${id}/cancel`)).toMatchObject({ status: 200 });
  });
});

describe('a campaign with a 20% holdout over 200 contacts', () => {
  let call: Call;
  let workspaceId: string;
  let campaignId: string;
  let held: SeededContact[];
  let sent: SeededContact[];

  beforeAll(async () => {
    const owner = await sender();
    ({ call, workspaceId } = owner);
    const listId = await createList(call);
    const prefix = `holdout-${workspaceId.slice(0, 8)}`;
    const contacts = await seedContacts(stack.api.db, workspaceId, { count: AUDIENCE, prefix, listId });
    campaignId = idOf(await call('POST', '/campaigns', { name: 'Lift', fromAddress: owner.from, listId, subject: 'S', html: '<p>x</p>', holdoutPercent: 20 }));
    ({ held, sent } = split(campaignId, contacts, 20));
  });

  it('the estimate counts those held out apart, and samples only those sent to', async () => {
    const estimate = await call('POST', `/campaigns/${campaignId}/estimate`);
    expect(estimate).toMatchObject({ status: 200, body: { estimate: { listMembers: AUDIENCE, recipients: sent.length, heldOut: held.length, excluded: 0 } } });
    const sample = (estimate.body as { estimate: { sample: string[] } }).estimate.sample;
    expect(sample).toHaveLength(5);
    for (const address of sample) expect(sent.map((contact) => contact.address)).toContain(address);
  });

  it('held-out contacts get no message and use no quota; the campaign ends sent with the sent group as its recipients', async () => {
    expect(await sendNow(call, campaignId)).toMatchObject({ status: 202, body: { status: 'sending', recipients: sent.length } });
    const done = await waitForCampaign(call, campaignId, ['sent']);
    expect(done).toMatchObject({ recipientCount: sent.length, holdoutPercent: 20, progress: { recipients: sent.length, sent: sent.length, failed: 0, canceled: 0 } });

    const rows = await recipientsOf(campaignId);
    expect(rows.filter((row) => row.holdout).map((row) => row.contact_id).sort()).toEqual(held.map((contact) => contact.id).sort());
    // Sent recipients are numbered 1..n, the feed's range; held-out ones -h..-1, below any cursor.
    expect(rows.filter((row) => !row.holdout).map((row) => row.position)).toEqual(sent.map((_, index) => index + 1));
    expect(rows.filter((row) => row.holdout).map((row) => row.position)).toEqual(held.map((_, index) => index - held.length));

    const messages = await stack.api.db.query<{ contact_id: string; status: string }>(
      'SELECT contact_id, status FROM messages WHERE workspace_id = $1 AND campaign_id = $2',
      { bind: [workspaceId, campaignId], type: QueryTypes.SELECT },
    );
    expect(messages.map((message) => message.contact_id).sort()).toEqual(sent.map((contact) => contact.id).sort());
    expect(new Set(messages.map((message) => message.status))).toEqual(new Set(['sent']));
    const mailed = stack.sink.received.map((mail) => mail.recipients[0]).filter((address) => address?.startsWith(`holdout-${workspaceId.slice(0, 8)}-`));
    expect(mailed.sort()).toEqual(sent.map((contact) => contact.address).sort());
    expect((await call('GET', '/usage')).body).toMatchObject({ messages: { used: sent.length } });
  });

  it('the lift report counts each group\'s conversions and orders in the window from the start, per recipient', async () => {
    // The campaign started ten days ago (T), so its 5-day window has ended.
    const T = new Date(Math.floor((Date.now() - 10 * DAY) / 1000) * 1000);
    await stack.api.db.query('UPDATE campaigns SET started_at = $2 WHERE id = $1', { bind: [campaignId, T.toISOString()] });
    const at = (offset: number) => new Date(T.getTime() + offset).toISOString();
    const order = async (contact: SeededContact, total: number, currency: string, placedAt: string, test = false) =>
      expect((await call('POST', '/commerce/orders', { externalId: randomUUID(), contactId: contact.id, total, currency, placedAt, test })).status).toBe(202);
    const event = async (contact: SeededContact, value: number, currency: string, occurredAt: string) =>
      expect((await call('POST', '/events', { event: 'upgrade', contactId: contact.id, occurredAt, properties: { value, currency } })).status).toBe(202);

    const [s0, s1, s2, s3] = sent;
    const [h0, h1] = held;
    await order(s0, 100, 'USD', at(DAY)); // counted: conversion and USD revenue
    await event(s0, 20, 'EUR', at(2 * DAY)); // counted: a conversion (events bring no order revenue)
    await order(s1, 50.5, 'eur', at(HOUR)); // counted
    await recordOrder(stack.api.db, workspaceId, {
      source: 'store', connectionId: randomUUID(), externalId: 'cancelled-1', contactId: s2.id, status: 'cancelled',
      total: '999.0000', refunded: '0.0000', currency: 'USD', placedAt: new Date(at(2 * DAY)), items: [], test: false,
    }); // excluded: cancelled (its conversion too)
    await order(s2, 500, 'USD', at(2 * DAY), true); // excluded: a test checkout
    await event(s3, 10, 'USD', at(-HOUR)); // excluded: before the start
    await order(s3, 70, 'USD', at(6 * DAY)); // excluded: after the window
    await order(h0, 40, 'USD', at(3 * DAY)); // counted
    await event(h1, 5, 'EUR', at(DAY)); // counted

    const S = sent.length;
    const H = held.length;
    const lift = await call('GET', `/campaigns/${campaignId}/lift`);
    expect(lift).toMatchObject({ status: 200 });
    expect(lift.body).toEqual({
      campaignId,
      holdoutPercent: 20,
      window: { from: T.toISOString(), until: at(5 * DAY), days: 5, complete: true },
      sent: {
        recipients: S,
        converters: 2,
        conversions: 3,
        conversionRate: 2 / S,
        byCurrency: [
          { currency: 'USD', orders: 1, revenue: 100, revenuePerRecipient: roundToCent(100 / S) },
          { currency: 'EUR', orders: 1, revenue: 50.5, revenuePerRecipient: roundToCent(50.5 / S) },
        ],
      },
      holdout: {
        recipients: H,
        converters: 2,
        conversions: 2,
        conversionRate: 2 / H,
        byCurrency: [{ currency: 'USD', orders: 1, revenue: 40, revenuePerRecipient: roundToCent(40 / H) }],
      },
      lift: expect.any(Number),
    });
    expect((lift.body as { lift: number }).lift).toBeCloseTo((2 / S - 2 / H) / (2 / H), 12);

    // A longer window takes in the order placed six days after the start.
    expect((await call('PUT', '/commerce/settings', { attributionWindowDays: 7 })).status).toBe(200);
    expect((await call('GET', `/campaigns/${campaignId}/lift`)).body).toMatchObject({
      window: { days: 7, until: at(7 * DAY) },
      sent: { converters: 3, conversions: 4, byCurrency: [{ currency: 'USD', orders: 2, revenue: 170, revenuePerRecipient: roundToCent(170 / S) }, { currency: 'EUR' }] },
    });
  });

  it('a draft has no groups yet; an unknown campaign is 404', async () => {
    const draft = idOf(await call('POST', '/campaigns', { name: 'Later', holdoutPercent: 10 }));
    expect(await call('GET', `/campaigns/${draft}/lift`)).toMatchObject({
      status: 200,
      body: {
        holdoutPercent: 10,
        window: null,
        sent: { recipients: 0, converters: 0, conversions: 0, conversionRate: null, byCurrency: [] },
        holdout: { recipients: 0, conversionRate: null },
        lift: null,
      },
    });
    expect(await call('GET', `/campaigns/${randomUUID()}/lift`)).toMatchObject({ status: 404 });
  });
});

describe('the snapshot', () => {
  it('a retried snapshot holds out the same contacts; with a local send time only the sent group is timed and numbered', async () => {
    const { call, from, workspaceId } = await sender();
    const listId = await createList(call);
    const contacts = await seedContacts(stack.api.db, workspaceId, { count: AUDIENCE, prefix: `retry-${workspaceId.slice(0, 8)}`, listId });
    const campaignId = idOf(await call('POST', '/campaigns', { name: 'Retry', fromAddress: from, listId, subject: 'S', text: 'T', holdoutPercent: 30, sendAtLocalTime: '09:00' }));
    const { held, sent } = split(campaignId, contacts, 30);
    // Sending, as POST /send leaves it, without a workflow: the snapshot is taken here, by hand.
    await stack.api.db.query("UPDATE campaigns SET status = 'sending' WHERE id = $1", { bind: [campaignId] });

    expect(await takeSnapshot(stack.api.db, workspaceId, campaignId, new Date())).toEqual({ state: 'ready', recipients: sent.length });
    const first = await recipientsOf(campaignId);
    expect(first.filter((row) => row.holdout).map((row) => row.contact_id).sort()).toEqual(held.map((contact) => contact.id).sort());
    expect(first.filter((row) => !row.holdout).map((row) => row.position)).toEqual(sent.map((_, index) => index + 1));
    expect(first.every((row) => (row.holdout ? row.send_after === null : row.send_after !== null))).toBe(true);
    expect((await call('GET', '/usage')).body).toMatchObject({ messages: { used: sent.length } });

    // Taken again after its commit: the same answer, nothing written twice.
    expect(await takeSnapshot(stack.api.db, workspaceId, campaignId, new Date())).toEqual({ state: 'ready', recipients: sent.length });
    expect(await recipientsOf(campaignId)).toEqual(first);

    // Taken again from scratch (what a rolled-back attempt leaves): the same people held out.
    await stack.api.db.query('DELETE FROM campaign_recipients WHERE campaign_id = $1', { bind: [campaignId] });
    await stack.api.db.query('UPDATE campaigns SET recipient_count = NULL WHERE id = $1', { bind: [campaignId] });
    expect(await takeSnapshot(stack.api.db, workspaceId, campaignId, new Date())).toEqual({ state: 'ready', recipients: sent.length });
    const again = await recipientsOf(campaignId);
    expect(again.filter((row) => row.holdout).map((row) => row.contact_id).sort()).toEqual(held.map((contact) => contact.id).sort());
    expect(await call('POST', `/campaigns/${campaignId}/cancel`)).toMatchObject({ status: 200 });
  });
});
