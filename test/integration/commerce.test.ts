import { randomUUID } from 'node:crypto';
import { QueryTypes } from 'sequelize';
import { recordTrackingEvents, type TrackingEvent } from '../../db/repositories/tracking-events';
import { type ApiHarness, type ApiResponse, startApi } from '../helpers/api-harness';
import { seedContacts } from '../helpers/campaigns';
import { createTestKey, addTestDomain, createTestWorkspace } from '../helpers/workspaces';
import { queueMessages } from '../helpers/factories';

/**
 * Commerce and revenue through the HTTP API, against hand-computed figures. The scenario (T is ten days ago):
 *
 * contacts c1..c4; campaign C sends m1..m4 (delivered, to c1..c4) and m5 (bounced, to c1); automation A sends
 * a1 (c2), a2 (c3), a3 (c1), all delivered; a transactional t1 to c4. Clicks (human unless said):
 *   c1: m1 CTA at T-2d, a3 logo at T-1h        c2: m2 CTA at T-3d, a1 CTA at T-1d
 *   c3: m3 CTA at T-1d, a bot's click on a2's CTA at T+2d (no touch)
 *   c4: m4 logo at T-2h, t1 (transactional) CTA at T-1h
 * Orders (window 5 days):
 *   O1 c1 USD 100 at T         → m1 (C): the later logo click of A never earns it
 *   O2 c2 USD 50, refunded 20 at T → a1 (A)
 *   O3 c3 EUR 80 at T+3d       → m3 (C), the bot click does not count
 *   O4 c4 USD 30 at T          → nobody: a logo and a transactional click only
 *   O5 c1 USD 999 at T+1h, cancelled; O6 c1 USD 500 at T+2h, a test: both excluded from every report
 *   O7 c3 EUR 40 at T+6d       → nobody: m3's click is 7 days before
 *   O8 c2 (by email) USD 10 at T+2d → a1 (A): m2's click is exactly 5 days before, outside the window
 */

const DAY = 86_400_000;
const HOUR = 3_600_000;

describe('commerce orders and revenue', () => {
  let api: ApiHarness;
  beforeAll(async () => {
    api = await startApi({ RATE_LIMIT_PER_SECOND: '1000' });
  });
  afterAll(() => api.close());

  const bodyOf = (response: ApiResponse) => response.body as Record<string, unknown>;

  async function workspace() {
    const { workspaceId, call } = await createTestWorkspace(api, { plan: 'pro' });
    return { workspaceId, call };
  }

  describe('the scenario', () => {
    const T = new Date(Math.floor((Date.now() - 10 * DAY) / 1000) * 1000);
    const at = (offset: number) => new Date(T.getTime() + offset);
    let call: (method: string, path: string, body?: unknown) => Promise<ApiResponse>;
    let campaignId: string;
    let automationId: string;
    const contact: string[] = [];
    const emails: string[] = [];
    const message: Record<string, string> = {};
    const order: Record<string, string> = {};

    beforeAll(async () => {
      const owner = await workspace();
      call = owner.call;
      const domain = (await addTestDomain(api, owner.workspaceId)).domain;
      const listId = bodyOf(await call('POST', '/lists', { name: 'buyers' })).id as string;
      campaignId = bodyOf(await call('POST', '/campaigns', { name: 'Sale', fromAddress: `news@${domain}`, listId, subject: 'Sale', text: 'T' })).id as string;
      const graph = { entry: 'wait', nodes: [{ id: 'wait', type: 'wait', duration: 'P1D', next: null }] };
      automationId = bodyOf(await call('POST', '/automations', { name: 'Welcome', trigger: { event: 'signup' }, graph })).id as string;
      for (const seeded of await seedContacts(api.db, owner.workspaceId, { count: 4, prefix: `buyer-${randomUUID().slice(0, 8)}` })) {
        contact.push(seeded.id);
        emails.push(seeded.address);
      }

      const sends: Array<{ name: string; kind: 'campaign' | 'automation' | 'transactional'; to: number; status: string }> = [
        { name: 'm1', kind: 'campaign', to: 0, status: 'delivered' },
        { name: 'm2', kind: 'campaign', to: 1, status: 'delivered' },
        { name: 'm3', kind: 'campaign', to: 2, status: 'delivered' },
        { name: 'm4', kind: 'campaign', to: 3, status: 'delivered' },
        { name: 'm5', kind: 'campaign', to: 0, status: 'bounced' },
        { name: 'a1', kind: 'automation', to: 1, status: 'delivered' },
        { name: 'a2', kind: 'automation', to: 2, status: 'delivered' },
        { name: 'a3', kind: 'automation', to: 0, status: 'complained' },
        { name: 't1', kind: 'transactional', to: 3, status: 'delivered' },
      ];
      for (const send of sends) {
        const [id] = await queueMessages(api.db, owner.workspaceId, { kind: send.kind, count: 1, from: `news@${domain}`, campaignId: send.kind === 'campaign' ? campaignId : undefined });
        message[send.name] = id;
        await api.db.query('UPDATE messages SET contact_id = $2, status = $3, automation_id = $4, created_at = $5 WHERE id = $1', {
          bind: [id, contact[send.to], send.status, send.kind === 'automation' ? automationId : null, at(-5 * DAY).toISOString()],
        });
      }

      // The tracking flush itself writes the touches, so kind, campaign and automation come from the messages.
      const click = (name: string, offset: number, role: 'cta' | 'logo', classification = 'human'): TrackingEvent => ({
        messageId: message[name],
        type: 'click',
        classification,
        reason: 'test',
        linkUrl: `https://shop.example.com/${role}`,
        linkId: null,
        linkRole: role,
        isContent: role === 'cta',
        touch: { url: `https://shop.example.com/${role}?utm_source=news`, source: 'news', medium: 'email', campaign: name },
        at: at(offset),
        data: {},
      });
      await recordTrackingEvents(api.db, [
        click('m1', -2 * DAY, 'cta'), click('a3', -HOUR, 'logo'),
        click('m2', -3 * DAY, 'cta'), click('a1', -DAY, 'cta'),
        click('m3', -DAY, 'cta'), click('a2', 2 * DAY, 'cta', 'bot'),
        click('m4', -2 * HOUR, 'logo'), click('t1', -HOUR, 'cta'),
      ]);

      const place = async (name: string, body: Record<string, unknown>) => {
        const response = await call('POST', '/commerce/orders', { externalId: `${name}-${randomUUID()}`, ...body });
        expect(response).toMatchObject({ status: 202, body: { status: 'accepted' } });
        order[name] = bodyOf(response).id as string;
      };
      await place('O1', { contactId: contact[0], total: 100, currency: 'USD', placedAt: at(0).toISOString() });
      await place('O2', { contactId: contact[1], total: 50, refunded: 20, currency: 'usd', placedAt: at(0).toISOString() });
      await place('O3', { contactId: contact[2], total: 80, currency: 'EUR', placedAt: at(3 * DAY).toISOString(), items: [{ title: 'Boots', quantity: 1, price: 80, productId: 'boots' }] });
      await place('O4', { contactId: contact[3], total: 30, currency: 'USD', placedAt: at(0).toISOString() });
      await place('O5', { contactId: contact[0], total: 999, currency: 'USD', placedAt: at(HOUR).toISOString() });
      await place('O6', { contactId: contact[0], total: 500, currency: 'USD', placedAt: at(2 * HOUR).toISOString(), test: true });
      await place('O7', { contactId: contact[2], total: 40, currency: 'EUR', placedAt: at(6 * DAY).toISOString() });
      await place('O8', { email: emails[1].toUpperCase(), total: 10, currency: 'USD', placedAt: at(2 * DAY).toISOString() });
      // What a store connection does when the shop cancels an order (API orders are always placed).
      await api.db.query(`UPDATE commerce_orders SET status = 'cancelled' WHERE id = $1`, { bind: [order.O5] });
    });

    it('each order is attributed to the last content click of a marketing message in the window, or to nobody', async () => {
      const attribution = async (name: string) => {
        const body = bodyOf(await call('GET', `/commerce/orders/${order[name]}`));
        return { name, messageId: body.attributedMessageId, to: body.attributedTo };
      };
      expect(await Promise.all(['O1', 'O2', 'O3', 'O4', 'O7', 'O8'].map(attribution))).toEqual([
        { name: 'O1', messageId: message.m1, to: { campaignId, automationId: null } },
        { name: 'O2', messageId: message.a1, to: { campaignId: null, automationId } },
        { name: 'O3', messageId: message.m3, to: { campaignId, automationId: null } },
        { name: 'O4', messageId: null, to: null },
        { name: 'O7', messageId: null, to: null },
        { name: 'O8', messageId: message.a1, to: { campaignId: null, automationId } },
      ]);
      expect(bodyOf(await call('GET', `/commerce/orders/${order.O3}`))).toMatchObject({
        source: 'api', connectionId: null, contactId: contact[2], status: 'placed', total: 80, refunded: 0, currency: 'EUR',
        placedAt: at(3 * DAY).toISOString(), items: [{ title: 'Boots', quantity: 1, price: 80, productId: 'boots' }], test: false,
      });
      expect(bodyOf(await call('GET', `/commerce/orders/${order.O8}`))).toMatchObject({ contactId: contact[1], currency: 'USD' });
    });

    it('every order records its conversion in integer cents', async () => {
      const rows = await api.db.query<{ order_id: string; value_cents: string; currency: string; name: string }>(
        `SELECT order_id, value_cents, currency, name FROM conversions WHERE source = 'order' AND order_id = ANY($1::uuid[])`,
        { bind: [Object.values(order)], type: QueryTypes.SELECT },
      );
      expect(rows).toHaveLength(8);
      expect(rows.find((row) => row.order_id === order.O2)).toMatchObject({ value_cents: '5000', currency: 'USD', name: 'order' });
    });

    it('the campaign report: two currencies, so the totals are null and byCurrency carries them', async () => {
      expect(bodyOf(await call('GET', `/campaigns/${campaignId}/revenue`))).toEqual({
        orders: 2, revenue: null, refunded: null, currency: null, averageOrderValue: null, revenuePerRecipient: null,
        byCurrency: [
          { currency: 'USD', revenue: 100, refunded: 0, orders: 1, averageOrderValue: 100 },
          { currency: 'EUR', revenue: 80, refunded: 0, orders: 1, averageOrderValue: 80 },
        ],
        attribution: { model: 'last_content_click', windowDays: 5 },
      });
    });

    it('the automation report: one currency, the refund apart, revenue per delivered message', async () => {
      // O2 (50, refunded 20) and O8 (10); a1, a2, a3 delivered (a3 then complained).
      expect(bodyOf(await call('GET', `/automations/${automationId}/revenue`))).toEqual({
        orders: 2, revenue: 60, refunded: 20, currency: 'USD', averageOrderValue: 30, revenuePerRecipient: 20,
        byCurrency: [{ currency: 'USD', revenue: 60, refunded: 20, orders: 2, averageOrderValue: 30 }],
        attribution: { model: 'last_content_click', windowDays: 5 },
      });
    });

    it('the workspace report counts attributed orders of the period, over the marketing messages delivered', async () => {
      const period = (until: number) => `from=${encodeURIComponent(at(-7 * DAY).toISOString())}&until=${encodeURIComponent(at(until).toISOString())}`;
      // Until T+2.5d: O1, O2, O8 (USD 160, refunded 20); 7 marketing messages delivered (m5 bounced, t1 transactional).
      expect(bodyOf(await call('GET', `/commerce/revenue?${period(2.5 * DAY)}`))).toEqual({
        orders: 3, revenue: 160, refunded: 20, currency: 'USD', averageOrderValue: 53.33, revenuePerRecipient: 22.86,
        byCurrency: [{ currency: 'USD', revenue: 160, refunded: 20, orders: 3, averageOrderValue: 53.33 }],
        attribution: { model: 'last_content_click', windowDays: 5 },
      });
      // Until T+7d: O3 (EUR 80) joins.
      expect(bodyOf(await call('GET', `/commerce/revenue?${period(7 * DAY)}`))).toMatchObject({
        orders: 4, revenue: null, refunded: null, currency: null, averageOrderValue: null, revenuePerRecipient: null,
        byCurrency: [
          { currency: 'USD', revenue: 160, refunded: 20, orders: 3, averageOrderValue: 53.33 },
          { currency: 'EUR', revenue: 80, refunded: 0, orders: 1, averageOrderValue: 80 },
        ],
      });
    });

    it('the other models read the same touches: first touch, linear shares, last touch counts the logo', async () => {
      // First touch, campaign C: O1 (m1), O2 (m2 before a1), O3 (m3), O4 (m4's logo; t1 is transactional).
      expect(bodyOf(await call('GET', `/campaigns/${campaignId}/revenue?model=first_touch`))).toMatchObject({
        orders: 4, revenue: null,
        byCurrency: [
          { currency: 'USD', revenue: 180, refunded: 20, orders: 3, averageOrderValue: 60 },
          { currency: 'EUR', revenue: 80, refunded: 0, orders: 1, averageOrderValue: 80 },
        ],
        attribution: { model: 'first_touch', windowDays: 5 },
      });
      // Linear, campaign C: O1 half (m1, a3) 50, O2 half (m2, a1) 25 refunded 10, O4 whole 30; O3 whole 80 EUR.
      expect(bodyOf(await call('GET', `/campaigns/${campaignId}/revenue?model=linear`))).toMatchObject({
        orders: 4,
        byCurrency: [
          { currency: 'USD', revenue: 105, refunded: 10, orders: 3, averageOrderValue: 35 },
          { currency: 'EUR', revenue: 80, refunded: 0, orders: 1, averageOrderValue: 80 },
        ],
      });
      // Last touch, automation A: O1 (a3's logo, after m1's CTA), O2 (a1), O8 (a1): USD 160 over 3 delivered.
      expect(bodyOf(await call('GET', `/automations/${automationId}/revenue?model=last_touch`))).toEqual({
        orders: 3, revenue: 160, refunded: 20, currency: 'USD', averageOrderValue: 53.33, revenuePerRecipient: 53.33,
        byCurrency: [{ currency: 'USD', revenue: 160, refunded: 20, orders: 3, averageOrderValue: 53.33 }],
        attribution: { model: 'last_touch', windowDays: 5 },
      });
    });

    it('a contact\'s commerce counts its real orders and lists its recent ones, the cancelled one included', async () => {
      const c1 = bodyOf(await call('GET', `/contacts/${contact[0]}/commerce`));
      expect(c1).toMatchObject({
        contactId: contact[0], ordersCount: 1, totalSpent: 100, currency: 'USD', averageOrderValue: 100,
        byCurrency: [{ currency: 'USD', revenue: 100, refunded: 0, orders: 1, averageOrderValue: 100 }],
        firstOrderAt: at(0).toISOString(), lastOrderAt: at(0).toISOString(),
      });
      expect((c1.recentOrders as Array<{ id: string; status: string }>).map((row) => [row.id, row.status])).toEqual([[order.O5, 'cancelled'], [order.O1, 'placed']]);
      expect(bodyOf(await call('GET', `/contacts/${contact[2]}/commerce`))).toMatchObject({
        ordersCount: 2, totalSpent: 120, currency: 'EUR', averageOrderValue: 60, firstOrderAt: at(3 * DAY).toISOString(), lastOrderAt: at(6 * DAY).toISOString(),
      });
    });
  });

  it('a repeat externalId updates the one order and its one conversion', async () => {
    const { call } = await workspace();
    const first = await call('POST', '/commerce/orders', { externalId: 'shop-1', total: 10, currency: 'GBP', placedAt: new Date().toISOString() });
    const again = await call('POST', '/commerce/orders', { externalId: 'shop-1', total: 12.5, refunded: 2.5, currency: 'GBP', placedAt: new Date().toISOString() });
    expect(bodyOf(again).id).toBe(bodyOf(first).id);
    expect(bodyOf(await call('GET', `/commerce/orders/${bodyOf(first).id as string}`))).toMatchObject({ total: 12.5, refunded: 2.5, contactId: null, attributedTo: null });
    const conversions = await api.db.query<{ value_cents: string }>('SELECT value_cents FROM conversions WHERE order_id = $1', { bind: [bodyOf(first).id], type: QueryTypes.SELECT });
    expect(conversions).toEqual([{ value_cents: '1250' }]);
  });

  it('the window setting decides attribution, and a re-sent order is attributed again under it', async () => {
    const { workspaceId, call } = await workspace();
    const [buyer] = await seedContacts(api.db, workspaceId, { count: 1, prefix: `window-${randomUUID().slice(0, 8)}` });
    const campaignId = randomUUID();
    const placedAt = new Date(Date.now() - DAY);
    // A content click of a campaign message two days before the order (a message since deleted: no message id).
    await api.db.query(
      `INSERT INTO utm_touches (id, workspace_id, contact_id, url, occurred_at, is_content, kind, campaign_id)
       VALUES (gen_random_uuid(), $1, $2, 'https://shop.example.com/p', $3, true, 'campaign', $4)`,
      { bind: [workspaceId, buyer.id, new Date(placedAt.getTime() - 2 * DAY).toISOString(), campaignId] },
    );
    const body = { externalId: 'w-1', contactId: buyer.id, total: 20, currency: 'USD', placedAt: placedAt.toISOString() };
    await call('PUT', '/commerce/settings', { attributionWindowDays: 1 });
    const id = bodyOf(await call('POST', '/commerce/orders', body)).id as string;
    expect(bodyOf(await call('GET', `/commerce/orders/${id}`)).attributedTo).toBeNull();
    await call('PUT', '/commerce/settings', { attributionWindowDays: 3 });
    expect(bodyOf(await call('POST', '/commerce/orders', body)).id).toBe(id);
    expect(bodyOf(await call('GET', `/commerce/orders/${id}`))).toMatchObject({ attributedMessageId: null, attributedTo: { campaignId, automationId: null } });
  });

  it('a model report over more orders than one page of its read counts every order once', async () => {
    const { workspaceId, call } = await workspace();
    const [buyer] = await seedContacts(api.db, workspaceId, { count: 1, prefix: `pages-${randomUUID().slice(0, 8)}` });
    const campaignId = randomUUID();
    const orders = 4_321;
    const placedAt = new Date(Date.now() - DAY);
    await api.db.query(
      `INSERT INTO utm_touches (id, workspace_id, contact_id, url, occurred_at, is_content, kind, campaign_id)
       VALUES (gen_random_uuid(), $1, $2, 'https://shop.example.com/p', $3, true, 'campaign', $4)`,
      { bind: [workspaceId, buyer.id, new Date(placedAt.getTime() - DAY).toISOString(), campaignId] },
    );
    // Orders of one moment too, so the pages' cursor must order by id within a placed_at.
    await api.db.query(
      `INSERT INTO commerce_orders (id, workspace_id, source, external_id, contact_id, total, currency, placed_at)
       SELECT gen_random_uuid(), $1, 'api', 'bulk-' || g, $2, 1, 'USD', $3::timestamptz + ((g % 7) * interval '1 second')
       FROM generate_series(1, $4::int) AS g`,
      { bind: [workspaceId, buyer.id, placedAt.toISOString(), orders] },
    );
    expect(bodyOf(await call('GET', '/commerce/revenue?model=linear'))).toMatchObject({ orders, revenue: orders, currency: 'USD' });
  });

  it('orders page newest first by cursor, and the last page has no cursor', async () => {
    const { call } = await workspace();
    const base = Date.now() - DAY;
    for (let i = 0; i < 5; i += 1) {
      await call('POST', '/commerce/orders', { externalId: `p-${i}`, total: i, currency: 'USD', placedAt: new Date(base + i * 1000).toISOString() });
    }
    const seen: string[] = [];
    let cursor: string | null = null;
    const sizes: number[] = [];
    do {
      const page = bodyOf(await call('GET', `/commerce/orders?limit=2${cursor ? `&cursor=${cursor}` : ''}`)) as { orders: Array<{ externalId: string }>; nextCursor: string | null };
      sizes.push(page.orders.length);
      seen.push(...page.orders.map((row) => row.externalId));
      cursor = page.nextCursor;
    } while (cursor);
    expect({ sizes, seen }).toEqual({ sizes: [2, 2, 1], seen: ['p-4', 'p-3', 'p-2', 'p-1', 'p-0'] });
    expect(await call('GET', '/commerce/orders?cursor=forged')).toMatchObject({ status: 422, body: { error: { fieldErrors: { cursor: expect.any(Array) } } } });
  });

  it('products upsert by externalId, list, and delete; settings hold the window from 1 to 90 days', async () => {
    const { call } = await workspace();
    expect(await call('PUT', '/commerce/products', { products: [{ externalId: 'boots', title: 'Boots', price: 80, currency: 'eur' }, { externalId: 'hat', title: 'Hat' }] })).toMatchObject({ status: 200, body: { upserted: 2 } });
    expect(await call('PUT', '/commerce/products', { products: [{ externalId: 'boots', title: 'Red boots', price: 75.5, currency: 'EUR' }] })).toMatchObject({ body: { upserted: 1 } });
    const products = (bodyOf(await call('GET', '/commerce/products')).products as Array<Record<string, unknown>>).map((p) => [p.externalId, p.title, p.price, p.currency]);
    expect(products).toEqual([['boots', 'Red boots', '75.50', 'EUR'], ['hat', 'Hat', null, null]]);
    expect(await call('DELETE', '/commerce/products/hat')).toMatchObject({ status: 200, body: { deleted: true } });
    expect(await call('DELETE', '/commerce/products/hat')).toMatchObject({ status: 404, body: { error: 'not_found' } });

    expect(bodyOf(await call('GET', '/commerce/settings'))).toEqual({ attributionWindowDays: 5 });
    expect(await call('PUT', '/commerce/settings', { attributionWindowDays: 14 })).toMatchObject({ status: 200, body: { attributionWindowDays: 14 } });
    expect(bodyOf(await call('GET', `/commerce/revenue`))).toMatchObject({ orders: 0, revenue: 0, refunded: 0, currency: null, attribution: { windowDays: 14 } });
    for (const days of [0, 91, 2.5]) {
      expect(await call('PUT', '/commerce/settings', { attributionWindowDays: days })).toMatchObject({ status: 422, body: { error: { fieldErrors: { attributionWindowDays: expect.any(Array) } } } });
    }
  });

  it('bad input is refused by field, and an unknown contact is a 404', async () => {
    const { call } = await workspace();
    const refused = await call('POST', '/commerce/orders', { total: -1, currency: 'QQQ', placedAt: 'yesterday', refunded: 1.23456 });
    expect(refused.status).toBe(422);
    expect(Object.keys((bodyOf(refused).error as { fieldErrors: Record<string, unknown> }).fieldErrors).sort()).toEqual(['currency', 'externalId', 'placedAt', 'refunded', 'total']);
    const placedAt = new Date().toISOString();
    expect(await call('POST', '/commerce/orders', { externalId: 'x', total: 1, currency: 'USD', placedAt, email: 'not an address' })).toMatchObject({ status: 422, body: { error: { fieldErrors: { email: expect.any(Array) } } } });
    expect(await call('POST', '/commerce/orders', { externalId: 'x', total: 1, currency: 'USD', placedAt, contactId: randomUUID() })).toMatchObject({ status: 404, body: { error: 'not_found' } });
    const tooMany = { products: Array.from({ length: 1001 }, (_, i) => ({ externalId: `p${i}`, title: 'P' })) };
    expect(await call('PUT', '/commerce/products', tooMany)).toMatchObject({ status: 422, body: { error: { fieldErrors: { products: expect.any(Array) } } } });
    expect(await call('GET', '/commerce/revenue?model=best')).toMatchObject({ status: 422, body: { error: { fieldErrors: { model: expect.any(Array) } } } });
  });

  it('writes take integrations:write and reads utm:read', async () => {
    const { workspaceId } = await createTestWorkspace(api);
    const reader = api.as((await createTestKey(api, workspaceId, ['utm:read'])).apiKey);
    const writer = api.as((await createTestKey(api, workspaceId, ['integrations:write'])).apiKey);
    const body = { externalId: 'scoped', total: 5, currency: 'USD', placedAt: new Date().toISOString() };
    expect(await reader('POST', '/commerce/orders', body)).toMatchObject({ status: 403, body: { need: 'integrations:write' } });
    expect(await writer('POST', '/commerce/orders', body)).toMatchObject({ status: 202 });
    expect(await writer('GET', '/commerce/orders')).toMatchObject({ status: 403, body: { need: 'utm:read' } });
    expect(bodyOf(await reader('GET', '/commerce/orders')).orders).toHaveLength(1);
  });
});
