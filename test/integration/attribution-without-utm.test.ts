import { type ApiHarness, type ApiResponse, startApi } from '../helpers/api-harness';
import { createTrackedMessage } from '../helpers/tracked-message';
import { HIT_FIXTURES, offsetsOf } from '../helpers/tracking-fixtures';
import { addTestDomain, createTestWorkspace } from '../helpers/workspaces';

// Issue 32: a person's click on a tracked link is a touch whether or not its target carries utm_*; the
// parameters only add the campaign fields. A campaign sent with disableUtm still earns its orders and conversions.
describe('attribution without UTM parameters', () => {
  let api: ApiHarness;
  beforeAll(async () => {
    api = await startApi({ RATE_LIMIT_PER_SECOND: '1000', TRUST_PROXY: 'loopback', PUBLIC_BASE_URL: 'https://t.acme.test' });
  });
  afterAll(() => api.close());

  const bodyOf = <T = Record<string, unknown>>(response: ApiResponse) => response.body as T;

  it('a person clicking an untagged link of a campaign makes a touch, and the campaign earns the order and the conversion that follow', async () => {
    const { workspaceId, call } = await createTestWorkspace(api, { plan: 'pro' });
    const domain = (await addTestDomain(api, workspaceId)).domain;
    const listId = bodyOf<{ id: string }>(await call('POST', '/lists', { name: 'buyers' })).id;
    const campaignId = bodyOf<{ id: string }>(await call('POST', '/campaigns', { name: 'No tags', fromAddress: `news@${domain}`, listId, subject: 'Sale', text: 'T' })).id;
    const contactId = bodyOf<{ id: string }>(await call('POST', '/contacts', { identities: [{ channel: 'email', address: `buyer-${Date.now()}@example.com` }] })).id;

    const fixture = HIT_FIXTURES.personClickingCta;
    const message = await createTrackedMessage(api.db, api.config, workspaceId, { sentAgoMs: offsetsOf(fixture)[0], kind: 'campaign', campaignId, utm: false });
    await api.db.query(`UPDATE messages SET contact_id = $2, status = 'delivered' WHERE id = $1`, { bind: [message.messageId, contactId] });

    const click = await fetch(`${api.url}${message.clickPath('review-cta')}`, {
      method: fixture.method,
      redirect: 'manual',
      headers: { 'user-agent': fixture.userAgent, 'x-forwarded-for': fixture.ip },
    });
    expect(click.status).toBe(302);
    expect(click.headers.get('location')).toBe('https://acme.example/review?from=mail');
    await api.tracking.buffer.flush(true);

    // The touch, with no campaign fields: the link carried none.
    expect(bodyOf(await call('GET', `/utm/touches?contactId=${contactId}`))).toMatchObject({
      total: 1,
      data: [{ contactId, messageId: message.messageId, source: null, medium: null, campaign: null, url: 'https://acme.example/review?from=mail', isContent: true }],
    });

    const placed = await call('POST', '/commerce/orders', { externalId: `order-${Date.now()}`, contactId, total: 40, currency: 'USD', placedAt: new Date().toISOString() });
    expect(placed.status).toBe(202);
    expect(bodyOf(await call('GET', `/commerce/orders/${bodyOf<{ id: string }>(placed).id}`))).toMatchObject({
      attributedMessageId: message.messageId,
      attributedTo: { campaignId, automationId: null },
    });

    expect((await call('POST', '/events', { event: 'upgraded', contactId, properties: { value: 12, currency: 'USD' } })).status).toBe(202);
    const conversions = bodyOf<{ data: Array<Record<string, unknown>> }>(await call('GET', `/contacts/${contactId}/conversions`)).data;
    expect(conversions.map((row) => ({ name: row.name, attributedKind: row.attributedKind, touchpoints: row.touchpoints, utmSource: row.utmSource }))).toEqual(
      expect.arrayContaining([
        { name: 'upgraded', attributedKind: 'campaign', touchpoints: 1, utmSource: null },
        { name: expect.any(String), attributedKind: 'campaign', touchpoints: 1, utmSource: null },
      ]),
    );
    const earned = bodyOf<{ total: number }>(await call('GET', `/campaigns/${campaignId}/conversions`));
    expect(earned.total).toBe(2);
  });
});
