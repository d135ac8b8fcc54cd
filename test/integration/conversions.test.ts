import { randomUUID } from 'node:crypto';
import { QueryTypes } from 'sequelize';
import { recordConversion } from '../../db/repositories/conversions';
import { type ApiHarness, type ApiResponse, startApi } from '../helpers/api-harness';
import { createTestKey, addTestDomain, createTestWorkspace } from '../helpers/workspaces';
import { createTrackedMessage } from '../helpers/tracked-message';
import { HIT_FIXTURES, type HitFixture } from '../helpers/tracking-fixtures';

// Conversions and UTM reports through the real API and database: touches are written as the tracking flush
// writes them (the 0024 columns), conversions through POST /events and recordConversion, and every number of
// the reports is checked against values computed by hand in the comments.
let api: ApiHarness;
beforeAll(async () => {
  api = await startApi({ RATE_LIMIT_PER_SECOND: '1000', TASK_QUEUE_PREFIX: `conv-${randomUUID().slice(0, 8)}-` });
});
afterAll(() => api.close());
jest.setTimeout(90_000);

type Call = (method: string, path: string, body?: unknown) => Promise<ApiResponse>;
const bodyOf = <T = Record<string, unknown>>(response: ApiResponse) => response.body as T;
const DAY = 86_400_000;
const HOUR = 3_600_000;
const T = new Date('2026-03-10T12:00:00.000Z');
const at = (offsetMs: number) => new Date(T.getTime() + offsetMs);

async function workspace() {
  const { workspaceId, call } = await createTestWorkspace(api, { plan: 'pro' });
  return { workspaceId, call };
}

async function contact(call: Call, address: string): Promise<string> {
  const response = await call('POST', '/contacts', { identities: [{ channel: 'email', address }] });
  expect(response.status).toBe(201);
  return bodyOf<{ id: string }>(response).id;
}

interface TouchSpec {
  contactId: string;
  at: Date;
  kind?: string;
  campaignId?: string;
  automationId?: string;
  source?: string | null;
  medium?: string | null;
  campaign?: string | null;
  url?: string;
  isContent?: boolean;
}

/** A person's click as the tracking flush stores it (db/repositories/tracking-events.ts). */
async function touch(workspaceId: string, spec: TouchSpec): Promise<string> {
  const id = randomUUID();
  const url = spec.url ?? 'https://shop.example/shoes';
  await api.db.query(
    `INSERT INTO utm_touches (id, workspace_id, contact_id, source, medium, campaign, url, occurred_at, is_content, canonical_url, kind, campaign_id, automation_id)
     VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13)`,
    {
      bind: [
        id, workspaceId, spec.contactId, spec.source === undefined ? 'news.example' : spec.source, spec.medium === undefined ? 'email' : spec.medium,
        spec.campaign === undefined ? 'Spring' : spec.campaign, `${url}?utm_source=news.example`, spec.at, spec.isContent ?? true, url,
        spec.kind ?? (spec.automationId ? 'automation' : 'campaign'), spec.campaignId ?? null, spec.automationId ?? null,
      ],
    },
  );
  return id;
}

async function conversionsOf(workspaceId: string) {
  return api.db.query<{ name: string; value_cents: string; currency: string | null; external_id: string }>(
    'SELECT name, value_cents, currency, external_id FROM conversions WHERE workspace_id = $1 ORDER BY created_at',
    { bind: [workspaceId], type: QueryTypes.SELECT },
  );
}

/** RFC 4180, enough to read the export back: quoted fields, doubled quotes, CRLF records. */
function parseCsv(text: string): string[][] {
  const records: string[][] = [];
  let record: string[] = [];
  let field = '';
  let quoted = false;
  for (let index = 0; index < text.length; index += 1) {
    const char = text[index];
    if (quoted) {
      if (char === '"' && text[index + 1] === '"') {
        field += '"';
        index += 1;
      } else if (char === '"') quoted = false;
      else field += char;
    } else if (char === '"') quoted = true;
    else if (char === ',') {
      record.push(field);
      field = '';
    } else if (char === '\r' && text[index + 1] === '\n') {
      record.push(field);
      records.push(record);
      record = [];
      field = '';
      index += 1;
    } else field += char;
  }
  return records;
}

describe('conversions from POST /events', () => {
  it('an event with properties.value records one conversion in cents; a retry with the same key still one', async () => {
    const { workspaceId, call } = await workspace();
    const body = { event: 'purchase', email: 'ann@example.com', properties: { value: 19.99, currency: 'eur' }, idempotencyKey: `order-${randomUUID()}` };
    const first = await call('POST', '/events', body);
    expect(first.status).toBe(202);
    expect((await call('POST', '/events', body)).status).toBe(200);
    expect(await conversionsOf(workspaceId)).toEqual([{ name: 'purchase', value_cents: '1999', currency: 'EUR', external_id: bodyOf<{ id: string }>(first).id }]);
  });

  it('a currency without cents is stored as value × 100; no currency is kept null; no value or a text value records none', async () => {
    const { workspaceId, call } = await workspace();
    expect((await call('POST', '/events', { event: 'order', email: 'jp@example.com', properties: { value: 1500, currency: 'JPY' } })).status).toBe(202);
    expect((await call('POST', '/events', { event: 'donation', email: 'jp@example.com', properties: { value: 0.125 } })).status).toBe(202);
    expect((await call('POST', '/events', { event: 'viewed', email: 'jp@example.com', properties: {} })).status).toBe(202);
    expect((await call('POST', '/events', { event: 'rated', email: 'jp@example.com', properties: { value: 'five' } })).status).toBe(202);
    expect((await conversionsOf(workspaceId)).map(({ name, value_cents, currency }) => ({ name, value_cents, currency }))).toEqual([
      { name: 'order', value_cents: '150000', currency: 'JPY' },
      { name: 'donation', value_cents: '13', currency: null },
    ]);
  });

  it('a negative value or a malformed currency → 422 by field, nothing stored, and the key is not consumed', async () => {
    const { workspaceId, call } = await workspace();
    const key = `refused-${randomUUID()}`;
    const currency = await call('POST', '/events', { event: 'purchase', email: 'x@example.com', properties: { value: 5, currency: 'euro' }, idempotencyKey: key });
    expect(currency).toMatchObject({ status: 422, body: { error: { fieldErrors: { 'properties.currency': [expect.any(String)] } } } });
    const negative = await call('POST', '/events', { event: 'purchase', email: 'x@example.com', properties: { value: -5 }, idempotencyKey: key });
    expect(negative).toMatchObject({ status: 422, body: { error: { fieldErrors: { 'properties.value': [expect.any(String)] } } } });
    expect(await conversionsOf(workspaceId)).toEqual([]);
    expect((await call('POST', '/events', { event: 'purchase', email: 'x@example.com', properties: { value: 5, currency: 'EUR' }, idempotencyKey: key })).status).toBe(202);
    expect(await conversionsOf(workspaceId)).toHaveLength(1);
  });
});

describe('conversion reports', () => {
  // One workspace, window 5 days (the default), T = 2026-03-10 12:00Z:
  //   ann: touch X "Spring" /shoes at T-3d, touch Y (automation) "Welcome" /bags at T-1d; purchase 40.00 EUR at T
  //   bob: touch X "Spring" /shoes at T-2d; purchase 25.50 EUR at T; signup 10.00 USD at T+1h;
  //        a cancelled order of 99.00 EUR at T (excluded everywhere)
  //   cat: touch X at T-7d (outside the window); purchase 1500 JPY at T (unattributed)
  let call: Call;
  let workspaceId: string;
  let campaignId: string;
  let automationId: string;
  const ids: Record<string, string> = {};

  beforeAll(async () => {
    ({ call, workspaceId } = await workspace());
    const domain = (await addTestDomain(api, workspaceId)).domain;
    const listId = bodyOf<{ id: string }>(await call('POST', '/lists', { name: 'Audience' })).id;
    campaignId = bodyOf<{ id: string }>(await call('POST', '/campaigns', { name: 'Spring', fromAddress: `news@${domain}`, listId, subject: 'Spring', text: 'T' })).id;
    const graph = { entry: 'wait', nodes: [{ id: 'wait', type: 'wait', duration: 'P1D', next: null }] };
    automationId = bodyOf<{ id: string }>(await call('POST', '/automations', { name: 'Welcome', trigger: { event: 'joined' }, graph })).id;
    ids.ann = await contact(call, 'ann@example.com');
    ids.bob = await contact(call, 'bob@example.com');
    ids.cat = await contact(call, 'cat@example.com');

    await touch(workspaceId, { contactId: ids.ann, at: at(-3 * DAY), campaignId });
    await touch(workspaceId, { contactId: ids.ann, at: at(-DAY), automationId, campaign: 'Welcome', url: 'https://shop.example/bags' });
    await touch(workspaceId, { contactId: ids.bob, at: at(-2 * DAY), campaignId });
    await touch(workspaceId, { contactId: ids.cat, at: at(-7 * DAY), campaignId });

    const event = async (contactId: string, name: string, value: number, currency: string, when: Date) => {
      const response = await call('POST', '/events', { event: name, contactId, properties: { value, currency }, occurredAt: when.toISOString() });
      expect(response.status).toBe(202);
      return bodyOf<{ id: string }>(response).id;
    };
    ids.annPurchase = await event(ids.ann, 'purchase', 40, 'EUR', T);
    ids.bobPurchase = await event(ids.bob, 'purchase', 25.5, 'EUR', T);
    ids.bobSignup = await event(ids.bob, 'signup', 10, 'USD', at(HOUR));
    ids.catPurchase = await event(ids.cat, 'purchase', 1500, 'JPY', T);

    const orderId = randomUUID();
    await api.db.query(
      `INSERT INTO commerce_orders (id, workspace_id, source, external_id, contact_id, status, total, currency, placed_at)
       VALUES ($1, $2, 'api', 'cancelled-1', $3, 'cancelled', 99, 'EUR', $4)`,
      { bind: [orderId, workspaceId, ids.bob, T] },
    );
    await recordConversion(api.db, workspaceId, { contactId: ids.bob, name: 'order', source: 'order', externalId: orderId, valueCents: 9900, currency: 'EUR', occurredAt: T, orderId, lookbackDays: 5 });
  });

  const conversionIdOf = async (eventId: string) =>
    (await api.db.query<{ id: string }>("SELECT id FROM conversions WHERE source = 'event' AND external_id = $1", { bind: [eventId], type: QueryTypes.SELECT }))[0].id;

  it('a contact\'s conversions: touchpoints in the window, time to convert from the first, the last touch credited, totals', async () => {
    const response = await call('GET', `/contacts/${ids.ann}/conversions`);
    expect(response.status).toBe(200);
    expect(response.body).toEqual({
      data: [
        {
          id: await conversionIdOf(ids.annPurchase),
          name: 'purchase',
          source: 'event',
          valueCents: 4000,
          currency: 'EUR',
          occurredAt: T.toISOString(),
          contactId: ids.ann,
          contactEmail: 'ann@example.com',
          touchUrl: 'https://shop.example/bags',
          touchAt: at(-DAY).toISOString(),
          nodeId: null,
          secondsFromTouch: 86_400,
          firstTouchAt: at(-3 * DAY).toISOString(),
          lastTouchAt: at(-DAY).toISOString(),
          timeToConvertSeconds: 259_200,
          touchpoints: 2,
          utmSource: 'news.example',
          utmMedium: 'email',
          utmCampaign: 'Welcome',
          attributedKind: 'automation',
        },
      ],
      totals: { conversions: 1, revenueCents: 4000, currency: 'EUR', byCurrency: [{ currency: 'EUR', conversions: 1, revenueCents: 4000 }] },
      lookbackDays: 5,
    });
  });

  it('a touch older than the window does not count: the conversion has no touchpoints and is unattributed', async () => {
    const { data } = bodyOf<{ data: Array<Record<string, unknown>> }>(await call('GET', `/contacts/${ids.cat}/conversions`));
    expect(data).toEqual([expect.objectContaining({ valueCents: 150_000, currency: 'JPY', touchpoints: 0, touchUrl: null, secondsFromTouch: null, timeToConvertSeconds: null, attributedKind: 'event' })]);
  });

  it('a contact with two currencies: totals count both, no currency, by currency highest first; the cancelled order left out', async () => {
    const { data, totals } = bodyOf<{ data: unknown[]; totals: unknown }>(await call('GET', `/contacts/${ids.bob}/conversions`));
    expect(data).toHaveLength(2);
    expect(totals).toEqual({
      conversions: 2,
      revenueCents: 3550,
      currency: null,
      byCurrency: [{ currency: 'EUR', conversions: 1, revenueCents: 2550 }, { currency: 'USD', conversions: 1, revenueCents: 1000 }],
    });
  });

  it('campaign conversions by last touch: bob\'s two (ann\'s last touch is the automation), mixed currencies', async () => {
    const response = await call('GET', `/campaigns/${campaignId}/conversions`);
    expect(response.status).toBe(200);
    const body = bodyOf(response);
    expect({ ...body, recent: undefined }).toEqual({
      attribution: 'last',
      lookbackDays: 5,
      total: 2,
      contacts: 1,
      revenueCents: 3550,
      currency: null,
      byCurrency: [{ currency: 'EUR', conversions: 1, revenueCents: 2550 }, { currency: 'USD', conversions: 1, revenueCents: 1000 }],
      byName: [
        { name: 'purchase', conversions: 1, revenueCents: 2550, currency: 'EUR', byCurrency: [{ currency: 'EUR', conversions: 1, revenueCents: 2550 }] },
        { name: 'signup', conversions: 1, revenueCents: 1000, currency: 'USD', byCurrency: [{ currency: 'USD', conversions: 1, revenueCents: 1000 }] },
      ],
      byLink: [{ url: 'https://shop.example/shoes', conversions: 2, contacts: 1, revenueCents: 3550, currency: null, byCurrency: body.byCurrency }],
      recent: undefined,
    });
    // Newest first: the signup an hour after T, 2 days and 1 hour after bob's click.
    expect(body.recent).toEqual([
      expect.objectContaining({ id: await conversionIdOf(ids.bobSignup), name: 'signup', contactEmail: 'bob@example.com', touchAt: at(-2 * DAY).toISOString(), secondsFromTouch: 2 * 86_400 + 3_600 }),
      expect.objectContaining({ id: await conversionIdOf(ids.bobPurchase), name: 'purchase', valueCents: 2550, secondsFromTouch: 2 * 86_400 }),
    ]);
  });

  it('campaign conversions by first touch: ann\'s too (her first click was the campaign\'s), 3 from 2 contacts', async () => {
    const body = bodyOf(await call('GET', `/campaigns/${campaignId}/conversions?attribution=first`));
    expect(body).toMatchObject({
      attribution: 'first',
      total: 3,
      contacts: 2,
      revenueCents: 7550,
      currency: null,
      byCurrency: [{ currency: 'EUR', conversions: 2, revenueCents: 6550 }, { currency: 'USD', conversions: 1, revenueCents: 1000 }],
      byName: [
        { name: 'purchase', conversions: 2, revenueCents: 6550, currency: 'EUR' },
        { name: 'signup', conversions: 1, revenueCents: 1000, currency: 'USD' },
      ],
      byLink: [{ url: 'https://shop.example/shoes', conversions: 3, contacts: 2, revenueCents: 7550 }],
    });
    const annRow = (body.recent as Array<Record<string, unknown>>).find((row) => row.contactId === ids.ann);
    expect(annRow).toMatchObject({ touchUrl: 'https://shop.example/shoes', touchAt: at(-3 * DAY).toISOString(), secondsFromTouch: 259_200 });
  });

  it('automation conversions: ann\'s purchase by last touch, none by first', async () => {
    expect(bodyOf(await call('GET', `/automations/${automationId}/conversions`))).toMatchObject({
      attribution: 'last',
      total: 1,
      contacts: 1,
      revenueCents: 4000,
      currency: 'EUR',
      byName: [{ name: 'purchase', conversions: 1, revenueCents: 4000 }],
      byLink: [{ url: 'https://shop.example/bags', conversions: 1, contacts: 1, revenueCents: 4000 }],
      recent: [{ contactId: ids.ann, touchUrl: 'https://shop.example/bags', secondsFromTouch: 86_400 }],
    });
    expect(bodyOf(await call('GET', `/automations/${automationId}/conversions?attribution=first`))).toEqual({
      attribution: 'first', lookbackDays: 5, total: 0, contacts: 0, revenueCents: 0, currency: null, byCurrency: [], byName: [], byLink: [], recent: [],
    });
  });

  it('the UTM summary by last and by first touch, with the unattributed conversion counted apart', async () => {
    expect(bodyOf(await call('GET', '/utm/summary'))).toEqual({
      attribution: 'last',
      rows: [
        {
          source: 'news.example', medium: 'email', campaign: 'Spring', conversions: 2, contacts: 1, revenueCents: 3550, currency: null,
          byCurrency: [{ currency: 'EUR', conversions: 1, revenueCents: 2550 }, { currency: 'USD', conversions: 1, revenueCents: 1000 }],
        },
        { source: 'news.example', medium: 'email', campaign: 'Welcome', conversions: 1, contacts: 1, revenueCents: 4000, currency: 'EUR', byCurrency: [{ currency: 'EUR', conversions: 1, revenueCents: 4000 }] },
      ],
      unattributed: 1,
    });
    expect(bodyOf(await call('GET', '/utm/summary?attribution=first'))).toEqual({
      attribution: 'first',
      rows: [
        {
          source: 'news.example', medium: 'email', campaign: 'Spring', conversions: 3, contacts: 2, revenueCents: 7550, currency: null,
          byCurrency: [{ currency: 'EUR', conversions: 2, revenueCents: 6550 }, { currency: 'USD', conversions: 1, revenueCents: 1000 }],
        },
      ],
      unattributed: 1,
    });
    // Only the signup (T+1h) is at or after T+30min.
    expect(bodyOf(await call('GET', `/utm/summary?from=${at(30 * 60_000).toISOString()}`))).toMatchObject({ rows: [{ campaign: 'Spring', conversions: 1, revenueCents: 1000, currency: 'USD' }], unattributed: 0 });
  });

  it('the UTM conversion list: every counted conversion, newest first, with its credited touch\'s UTM', async () => {
    const last = bodyOf<{ data: Array<Record<string, unknown>>; total: number }>(await call('GET', '/utm/conversions'));
    expect(last.total).toBe(4);
    expect(last.data[0]).toEqual({
      id: await conversionIdOf(ids.bobSignup), name: 'signup', conversionSource: 'event', source: 'news.example', medium: 'email', campaign: 'Spring',
      valueCents: 1000, currency: 'USD', contactId: ids.bob, occurredAt: at(HOUR).toISOString(),
    });
    const campaignOf = (list: typeof last, contactId: string) => list.data.filter((row) => row.contactId === contactId && row.name === 'purchase').map((row) => row.campaign);
    expect(campaignOf(last, ids.ann)).toEqual(['Welcome']);
    expect(campaignOf(last, ids.cat)).toEqual([null]);
    const first = bodyOf<typeof last>(await call('GET', '/utm/conversions?attribution=first&limit=10'));
    expect(campaignOf(first, ids.ann)).toEqual(['Spring']);
    expect(bodyOf<typeof last>(await call('GET', '/utm/conversions?limit=1&offset=3')).data).toHaveLength(1);
  });

  it('conversion stats by name: counts, contacts, value, average time to convert over touched ones, average touchpoints, first and last', async () => {
    // purchase: ann (2 touches, first 3 days before), bob (1, 2 days before), cat (none); EUR 65.50 and JPY 1500.
    // signup: bob (1 touch, 2 days and 1 hour before). The cancelled order is left out.
    expect(bodyOf(await call('GET', '/utm/conversions/stats'))).toEqual({
      data: [
        {
          name: 'purchase', conversions: 3, contacts: 3, revenueCents: 156_550, currency: null,
          byCurrency: [{ currency: 'JPY', conversions: 1, revenueCents: 150_000 }, { currency: 'EUR', conversions: 2, revenueCents: 6550 }],
          avgTimeToConvertSeconds: 216_000, avgTouchpoints: 1, firstAt: T.toISOString(), lastAt: T.toISOString(),
        },
        {
          name: 'signup', conversions: 1, contacts: 1, revenueCents: 1000, currency: 'USD', byCurrency: [{ currency: 'USD', conversions: 1, revenueCents: 1000 }],
          avgTimeToConvertSeconds: 176_400, avgTouchpoints: 1, firstAt: at(HOUR).toISOString(), lastAt: at(HOUR).toISOString(),
        },
      ],
    });
    // UTM filters match the credited touch: by last touch ann's purchase is Welcome's; by first touch it is Spring's.
    const spring = async (attribution: string) =>
      bodyOf<{ data: Array<Record<string, unknown>> }>(await call('GET', `/utm/conversions/stats?campaign=Spring&attribution=${attribution}`)).data.map((row) => [row.name, row.conversions, row.avgTouchpoints]);
    expect(await spring('last')).toEqual([['purchase', 1, 1], ['signup', 1, 1]]);
    expect(await spring('first')).toEqual([['purchase', 2, 1.5], ['signup', 1, 1]]);
    expect(bodyOf(await call('GET', `/utm/conversions/stats?until=${T.toISOString()}`))).toEqual({ data: [] });
  });

  it('an unknown attribution or a malformed date → 422 by field', async () => {
    expect(await call('GET', `/campaigns/${campaignId}/conversions?attribution=linear`)).toMatchObject({ status: 422, body: { error: { fieldErrors: { attribution: expect.any(Array) } } } });
    expect(await call('GET', '/utm/summary?from=yesterday')).toMatchObject({ status: 422, body: { error: { fieldErrors: { from: expect.any(Array) } } } });
    expect(await call('GET', '/utm/conversions/stats?attribution=linear')).toMatchObject({ status: 422, body: { error: { fieldErrors: { attribution: expect.any(Array) } } } });
  });
});

describe('from a real click to a campaign\'s conversion', () => {
  const hit = (path: string, fixture: HitFixture) =>
    fetch(`${api.url}${path}`, { method: fixture.method, redirect: 'manual', headers: { 'user-agent': fixture.userAgent, 'x-forwarded-for': fixture.ip } });

  it('a person\'s CTA click is the touch a later purchase event is credited to; a scanner\'s hits are not touches', async () => {
    const { workspaceId, call } = await workspace();
    const domain = (await addTestDomain(api, workspaceId)).domain;
    const listId = bodyOf<{ id: string }>(await call('POST', '/lists', { name: 'Audience' })).id;
    const campaignId = bodyOf<{ id: string }>(await call('POST', '/campaigns', { name: 'Spring', fromAddress: `news@${domain}`, listId, subject: 'Spring', text: 'T' })).id;
    const contactId = await contact(call, 'dan@example.com');
    // Two messages of the campaign to the contact: a scanner HEADs the CTA of one, the person clicks the CTA of the other.
    const [clicked, scanned] = await Promise.all([1, 2].map(() => createTrackedMessage(api.db, api.config, workspaceId, { sentAgoMs: 15 * 60_000, kind: 'campaign', campaignId })));
    await api.db.query('UPDATE messages SET contact_id = $2 WHERE id = ANY($1::uuid[])', { bind: [[clicked.messageId, scanned.messageId], contactId] });
    await hit(scanned.clickPath('review-cta'), HIT_FIXTURES.headRequest);
    await hit(clicked.clickPath('review-cta'), HIT_FIXTURES.personClickingCta);
    await api.tracking.buffer.flush(true);

    expect((await call('POST', '/events', { event: 'purchase', contactId, properties: { value: 30, currency: 'EUR' } })).status).toBe(202);
    const report = bodyOf(await call('GET', `/campaigns/${campaignId}/conversions`));
    expect(report).toMatchObject({
      total: 1,
      contacts: 1,
      revenueCents: 3000,
      currency: 'EUR',
      byLink: [{ url: 'https://acme.example/review?from=mail', conversions: 1, contacts: 1, revenueCents: 3000 }],
      recent: [{ contactId, contactEmail: 'dan@example.com', touchUrl: 'https://acme.example/review?from=mail', valueCents: 3000 }],
    });
    const { data } = bodyOf<{ data: Array<Record<string, unknown>> }>(await call('GET', `/contacts/${contactId}/conversions`));
    expect(data).toEqual([expect.objectContaining({ touchpoints: 1, attributedKind: 'campaign', utmMedium: 'email' })]);
  });
});

describe('UTM touches', () => {
  it('pages newest first with total, page and pageSize; filters by UTM value, contact and period', async () => {
    const { workspaceId, call } = await workspace();
    const ann = await contact(call, 'ann@example.com');
    const bob = await contact(call, 'bob@example.com');
    const a1 = await touch(workspaceId, { contactId: ann, at: at(-3 * HOUR), source: 'news.example', campaign: 'Spring' });
    const a2 = await touch(workspaceId, { contactId: ann, at: at(-2 * HOUR), source: 'partner.example', campaign: 'Spring' });
    const b1 = await touch(workspaceId, { contactId: bob, at: at(-HOUR), source: 'news.example', campaign: 'Summer' });
    const idsOf = (response: ApiResponse) => bodyOf<{ data: Array<{ id: string }> }>(response).data.map((row) => row.id);

    const second = await call('GET', '/utm/touches?page=2&pageSize=2');
    expect(second.body).toMatchObject({ total: 3, page: 2, pageSize: 2 });
    expect(idsOf(second)).toEqual([a1]);
    expect(idsOf(await call('GET', '/utm/touches'))).toEqual([b1, a2, a1]);
    expect(bodyOf<{ data: unknown[] }>(await call('GET', '/utm/touches?pageSize=1')).data[0]).toEqual({
      id: b1, source: 'news.example', medium: 'email', campaign: 'Summer', contactId: bob, messageId: null, url: 'https://shop.example/shoes', isContent: true, occurredAt: at(-HOUR).toISOString(),
    });
    expect(idsOf(await call('GET', '/utm/touches?source=news.example'))).toEqual([b1, a1]);
    expect(idsOf(await call('GET', '/utm/touches?campaign=Spring&medium=email'))).toEqual([a2, a1]);
    expect(idsOf(await call('GET', `/utm/touches?contactId=${bob}`))).toEqual([b1]);
    expect(idsOf(await call('GET', `/utm/touches?from=${at(-2 * HOUR).toISOString()}&until=${at(-HOUR).toISOString()}`))).toEqual([a2]);
  });

  it('pageSize over 200 or page 0 → 422 by field', async () => {
    const { call } = await workspace();
    expect(await call('GET', '/utm/touches?pageSize=201')).toMatchObject({ status: 422, body: { error: { fieldErrors: { pageSize: expect.any(Array) } } } });
    expect(await call('GET', '/utm/touches?page=0')).toMatchObject({ status: 422, body: { error: { fieldErrors: { page: expect.any(Array) } } } });
    expect(await call('GET', '/utm/touches?contactId=nope')).toMatchObject({ status: 422, body: { error: { fieldErrors: { contactId: expect.any(Array) } } } });
  });

  it('format=csv streams every matching touch across batches, newest first, read back field for field', async () => {
    const { workspaceId, call } = await workspace();
    const ann = await contact(call, 'ann@example.com');
    // 2,500 touches: more than two export batches of 1,000.
    await api.db.query(
      `INSERT INTO utm_touches (id, workspace_id, contact_id, source, medium, campaign, url, canonical_url, occurred_at, kind)
       SELECT gen_random_uuid(), $1, $2, 'bulk.example', 'email', 'Bulk', 'https://shop.example/x', 'https://shop.example/x', $3::timestamptz - make_interval(secs => n), 'campaign'
       FROM generate_series(1, 2500) n`,
      { bind: [workspaceId, ann, at(-DAY)] },
    );
    const tricky = await touch(workspaceId, { contactId: ann, at: T, source: '=HYPERLINK("x")', campaign: 'Spring, "sale"', url: 'https://shop.example/a,b' });

    const response = await fetch(`${api.url}/api/v1/utm/touches?format=csv`, { headers: { authorization: `Bearer ${(await createTestKey(api, workspaceId, ['utm:read'])).apiKey}` } });
    expect(response.status).toBe(200);
    expect(response.headers.get('content-type')).toBe('text/csv; charset=utf-8');
    const records = parseCsv(await response.text());
    expect(records[0]).toEqual(['id', 'occurredAt', 'contactId', 'messageId', 'source', 'medium', 'campaign', 'url', 'isContent']);
    expect(records[1]).toEqual([tricky, T.toISOString(), ann, '', '\'=HYPERLINK("x")', 'email', 'Spring, "sale"', 'https://shop.example/a,b', 'true']);
    const rows = records.slice(1);
    expect(rows).toHaveLength(2501);
    expect(new Set(rows.map((row) => row[0])).size).toBe(2501);
    const times = rows.map((row) => Date.parse(row[1]));
    expect(times.every((time, index) => index === 0 || time <= times[index - 1])).toBe(true);

    const filtered = await fetch(`${api.url}/api/v1/utm/touches?format=csv&source=bulk.example&from=${at(-DAY - 10_000).toISOString()}`, {
      headers: { authorization: `Bearer ${(await createTestKey(api, workspaceId, ['utm:read'])).apiKey}` },
    });
    // The touches 1 to 10 seconds before T-1d; from is inclusive, so the one exactly 10 seconds before counts.
    expect(parseCsv(await filtered.text()).slice(1).map((row) => row[4])).toEqual(Array(10).fill('bulk.example'));
  });
  it('the API document gives the touch list both answers: UtmTouchList as JSON and text/csv', async () => {
    type Document = { paths: Record<string, { get: { responses: Record<string, { content: Record<string, unknown> }> } }> };
    const document = bodyOf<Document>(await api.call('GET', '/api/v1/openapi.json'));
    expect(Object.keys(document.paths['/api/v1/utm/touches'].get.responses['200'].content).sort()).toEqual(['application/json', 'text/csv']);
  });
});

describe('scopes', () => {
  it('utm:read reads every conversion report; a key without it → 403 on each', async () => {
    const { workspaceId, call } = await workspace();
    const contactId = await contact(call, 'ann@example.com');
    const reader = api.as((await createTestKey(api, workspaceId, ['utm:read'])).apiKey);
    const other = api.as((await createTestKey(api, workspaceId, ['contacts:read', 'campaigns:read', 'automations:read'])).apiKey);
    const paths = ['/utm/touches', '/utm/touches?format=csv', '/utm/summary', '/utm/conversions', '/utm/conversions/stats', `/contacts/${contactId}/conversions`];
    for (const path of paths) {
      expect({ path, status: (await reader('GET', path)).status }).toEqual({ path, status: 200 });
      expect({ path, response: await other('GET', path) }).toMatchObject({ path, response: { status: 403, body: { error: 'forbidden' } } });
    }
    expect(await reader('GET', `/campaigns/${randomUUID()}/conversions`)).toMatchObject({ status: 404, body: { error: 'not_found' } });
    expect(await reader('GET', `/automations/${randomUUID()}/conversions`)).toMatchObject({ status: 404, body: { error: 'not_found' } });
  });
});
