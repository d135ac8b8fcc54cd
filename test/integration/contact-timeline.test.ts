import { randomUUID } from 'node:crypto';
import { insertContactEvent } from '../../db/repositories/contact-events';
import { recordConversion } from '../../db/repositories/conversions';
import { recordTrackingEvents, type TrackingEvent } from '../../db/repositories/tracking-events';
import { type ApiHarness, type ApiResponse, startApi } from '../helpers/api-harness';
import { queueMessages } from '../helpers/factories';
import { addTestDomain, createTestWorkspace } from '../helpers/workspaces';

// Issue 32: a contact's journey shows every send (campaign and transactional, not only journey messages) with
// its engagement summary, its touches (clicks, UTM or not; analytics visits; events), its conversions with the
// `test` flag of a store's test order, in time order, paged with a cursor that neither repeats nor skips.
const DAY = 86_400_000;
const HOUR = 3_600_000;

describe('the contact journey, complete', () => {
  let api: ApiHarness;
  beforeAll(async () => {
    api = await startApi({ RATE_LIMIT_PER_SECOND: '1000' });
  });
  afterAll(() => api.close());

  const bodyOf = <T = Record<string, unknown>>(response: ApiResponse) => response.body as T;
  type Entry = Record<string, unknown> & { type: string; at: string };
  type Page = { data: Entry[]; nextCursor: string | null };

  it('sends of every kind with engagement, touches with and without UTM, analytics visits and conversions, newest first; a cursor pages through ties with no repeat or gap', async () => {
    const { workspaceId, call } = await createTestWorkspace(api, { plan: 'pro' });
    const domain = (await addTestDomain(api, workspaceId)).domain;
    const address = `ada-${randomUUID().slice(0, 8)}@example.com`;
    const contactId = bodyOf<{ id: string }>(await call('POST', '/contacts', { identities: [{ channel: 'email', address }] })).id;
    const listId = bodyOf<{ id: string }>(await call('POST', '/lists', { name: 'all' })).id;
    const campaignId = bodyOf<{ id: string }>(await call('POST', '/campaigns', { name: 'Spring', fromAddress: `news@${domain}`, listId, subject: 'Spring sale', text: 'T' })).id;
    const T = Math.floor(Date.now() / 1000) * 1000;
    const at = (offset: number) => new Date(T + offset);

    // A transactional email through POST /emails, to the contact's address written with a display name and in capitals.
    const sent = await call('POST', '/emails', { from: `shop@${domain}`, to: `Ada Lovelace <${address.toUpperCase()}>`, subject: 'Your receipt', text: 'Thanks', idempotencyKey: randomUUID() });
    expect(sent.status).toBe(202);
    const receiptId = bodyOf<{ id: string }>(sent).id;
    // Someone else's transactional email never shows.
    expect((await call('POST', '/emails', { from: `shop@${domain}`, to: 'someone@example.com', subject: 'Not Ada', text: 'x', idempotencyKey: randomUUID() })).status).toBe(202);
    const [campaignMessage] = await queueMessages(api.db, workspaceId, { kind: 'campaign', count: 1, from: `news@${domain}`, campaignId });
    await api.db.query('UPDATE messages SET contact_id = $2, subject = $3, status = $4, created_at = $5 WHERE id = $1', {
      bind: [campaignMessage, contactId, 'Spring sale', 'delivered', at(-2 * DAY).toISOString()],
    });
    await api.db.query('UPDATE messages SET created_at = $2 WHERE id = $1', { bind: [receiptId, at(-3 * DAY).toISOString()] });

    // A human open, then a human click on an untagged content link of the campaign message.
    const hit = (type: 'open' | 'click', offset: number): TrackingEvent => ({
      messageId: campaignMessage, type, classification: 'human', reason: 'test', at: at(offset), data: {},
      linkUrl: type === 'click' ? 'https://shop.example/boots' : null, linkId: type === 'click' ? 'l1' : null, linkRole: type === 'click' ? 'cta' : null,
      isContent: type === 'click', touch: type === 'click' ? { url: 'https://shop.example/boots', source: null, medium: null, campaign: null } : null,
    });
    await recordTrackingEvents(api.db, [hit('open', -2 * DAY + HOUR), hit('click', -2 * DAY + 2 * HOUR)]);

    // A store's test order the next day: credited to the campaign's click, and marked test.
    const order = await call('POST', '/commerce/orders', { externalId: `o-${randomUUID()}`, contactId, total: 40, currency: 'USD', placedAt: at(-DAY).toISOString(), test: true });
    expect(order.status).toBe(202);
    const orderId = bodyOf<{ id: string }>(order).id;

    // Ten days earlier, three entries at one moment: an event, and an analytics conversion with its own visit's UTM.
    const early = at(-10 * DAY);
    await insertContactEvent(api.db, workspaceId, { contactId, name: 'signed_up', occurredAt: early });
    const analytics = await recordConversion(api.db, workspaceId, {
      contactId, name: 'newsletter', source: 'analytics', externalId: `a-${randomUUID()}`, valueCents: 0, currency: null, occurredAt: early, lookbackDays: 5,
      utm: { source: 'google', medium: 'cpc', campaign: 'brand' },
    });

    const full = bodyOf<Page>(await call('GET', `/contacts/${contactId}/journey`));
    expect(full.nextCursor).toBeNull();
    const noTracking = { utmSource: null, utmMedium: null, utmCampaign: null };
    expect(full.data).toEqual([
      {
        type: 'conversion', at: at(-DAY).toISOString(), kind: 'campaign', name: 'order', conversionId: expect.any(String), conversionSource: 'order',
        valueCents: 4000, currency: 'USD', touchpoints: 1, messageId: campaignMessage, campaignId, automationId: null, ...noTracking, orderId, status: 'placed', test: true,
      },
      {
        type: 'touch', at: at(-2 * DAY + 2 * HOUR).toISOString(), kind: 'campaign', messageId: campaignMessage, campaignId, automationId: null,
        url: 'https://shop.example/boots', isContent: true, ...noTracking, test: false,
      },
      {
        type: 'message_sent', at: at(-2 * DAY).toISOString(), kind: 'campaign', messageId: campaignMessage, channel: 'email', subject: 'Spring sale', status: 'delivered',
        campaignId, campaignName: 'Spring', test: false,
        events: { openedHuman: 1, openedMachine: 0, clicks: 1, contentClicks: 1, links: ['https://shop.example/boots'], lastLinkUrl: 'https://shop.example/boots', bounced: false, unsubscribed: false },
      },
      {
        type: 'message_sent', at: at(-3 * DAY).toISOString(), kind: 'transactional', messageId: receiptId, channel: 'email', subject: 'Your receipt', status: 'queued', test: false,
        events: { openedHuman: 0, openedMachine: 0, clicks: 0, contentClicks: 0, links: [], lastLinkUrl: null, bounced: false, unsubscribed: false },
      },
      {
        type: 'conversion', at: early.toISOString(), kind: 'analytics', name: 'newsletter', conversionId: analytics.id, conversionSource: 'analytics', valueCents: 0,
        currency: null, touchpoints: 0, messageId: null, campaignId: null, automationId: null, utmSource: 'google', utmMedium: 'cpc', utmCampaign: 'brand', test: false,
      },
      { type: 'touch', at: early.toISOString(), kind: 'analytics', name: 'newsletter', conversionId: analytics.id, utmSource: 'google', utmMedium: 'cpc', utmCampaign: 'brand', test: false },
      { type: 'touch', at: early.toISOString(), kind: 'event', name: 'signed_up', test: false },
    ]);

    // One entry a page: the same entries in the same order, the three of one moment included, then the end.
    const paged: Entry[] = [];
    let cursor: string | null = null;
    for (let pages = 0; pages < 10; pages += 1) {
      const page: Page = bodyOf<Page>(await call('GET', `/contacts/${contactId}/journey?limit=1${cursor ? `&cursor=${cursor}` : ''}`));
      paged.push(...page.data);
      cursor = page.nextCursor;
      if (!cursor) break;
    }
    expect(paged).toEqual(full.data);

    expect(await call('GET', `/contacts/${contactId}/journey?cursor=not-a-cursor`)).toMatchObject({ status: 422, body: { error: { fieldErrors: { cursor: expect.any(Array) } } } });
  });
});
