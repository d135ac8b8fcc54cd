import { randomUUID } from 'node:crypto';
import { QueryTypes } from 'sequelize';
import { type ApiHarness, startApi } from '../helpers/api-harness';
import { createTestWorkspace, type TestWorkspace } from '../helpers/workspaces';
import { createTrackedMessage, type TrackedMessage } from '../helpers/tracked-message';
import { HIT_FIXTURES, type HitFixture, offsetsOf } from '../helpers/tracking-fixtures';

interface Status {
  engagement: { opensHuman: number; opensMachine: number; clicks: number; contentClicks: number; lastLinkUrl: string | null; lastLinkRole: string | null; links: string[]; lastEventAt: string | null };
  links: Array<{ url: string; canonicalUrl: string; role: string | null; isContent: boolean; count: number; lastAt: string }>;
  events: Array<{ type: string; classification: string | null; reason?: string | null; linkUrl: string | null; linkId: string | null; linkRole: string | null }>;
}

describe('open and click tracking over HTTP', () => {
  let api: ApiHarness;
  let workspace: TestWorkspace;

  beforeAll(async () => {
    // Fixtures carry the client's address in X-Forwarded-For, as a load balancer in front would.
    api = await startApi({ RATE_LIMIT_PER_SECOND: '1000', TRUST_PROXY: 'loopback', PUBLIC_BASE_URL: 'https://t.acme.test' });
    workspace = await createTestWorkspace(api);
  });

  afterAll(async () => {
    await api.close();
  });

  const hit = (path: string, fixture: Pick<HitFixture, 'method' | 'ip' | 'userAgent'>) =>
    fetch(`${api.url}${path}`, { method: fixture.method, redirect: 'manual', headers: { 'user-agent': fixture.userAgent, 'x-forwarded-for': fixture.ip } });

  const status = async (messageId: string): Promise<Status> => {
    await api.tracking.buffer.flush(true);
    const response = await api.as(workspace.apiKey)('GET', `/emails/${messageId}`);
    expect(response.status).toBe(200);
    return response.body as Status;
  };

  const trackingEvents = (body: Status) => body.events.filter((event) => event.type === 'open' || event.type === 'click');

  /** Replays a fixture against a message sent as long before as the recording says. */
  async function replay(fixture: HitFixture, pathOf: (message: TrackedMessage, index: number) => string): Promise<Status> {
    const offsets = offsetsOf(fixture);
    const message = await createTrackedMessage(api.db, api.config, workspace.workspaceId, { sentAgoMs: offsets[0] });
    for (const [index] of offsets.entries()) {
      const response = await hit(pathOf(message, index), fixture);
      if (fixture.kind === 'click') expect(response.status).toBe(302);
    }
    return status(message.messageId);
  }

  it("Apple's privacy proxy prefetching the pixel is a prefetch: a machine open, not a human one", async () => {
    const body = await replay(HIT_FIXTURES.applePrivacyProxyPrefetch, (message) => message.pixelPath);
    expect(trackingEvents(body)).toEqual([expect.objectContaining({ type: 'open', ...HIT_FIXTURES.applePrivacyProxyPrefetch.expect })]);
    expect(body.engagement).toMatchObject({ opensHuman: 0, opensMachine: 1, lastEventAt: null });
  });

  it("Google's image proxy fetching the pixel is the person opening", async () => {
    const body = await replay(HIT_FIXTURES.googleImageProxy, (message) => message.pixelPath);
    expect(trackingEvents(body)).toEqual([expect.objectContaining({ type: 'open', ...HIT_FIXTURES.googleImageProxy.expect })]);
    expect(body.engagement).toMatchObject({ opensHuman: 1, opensMachine: 0 });
    expect(body.engagement.lastEventAt).not.toBeNull();
  });

  it('a HEAD request on a link gets its 302 and is a bot', async () => {
    const body = await replay(HIT_FIXTURES.headRequest, (message) => message.clickPath('review-cta'));
    expect(trackingEvents(body)).toEqual([expect.objectContaining({ type: 'click', linkId: 'review-cta', ...HIT_FIXTURES.headRequest.expect })]);
    expect(body.engagement).toMatchObject({ clicks: 0, contentClicks: 0, lastLinkUrl: null, links: [] });
  });

  it('a scanner clicking every link within two seconds of delivery gets every 302, and every click is a bot', async () => {
    const ids = ['l0', 'l1', 'review-cta', 'l3', 'l4', 'honeypot'];
    const body = await replay(HIT_FIXTURES.scannerClickingEveryLink, (message, index) => message.clickPath(ids[index]));
    const clicks = trackingEvents(body);
    expect(clicks.map((event) => event.linkId).sort()).toEqual([...ids].sort());
    // The honeypot is the more telling rule for its own click; every other says the scanner came at delivery.
    for (const event of clicks) expect(event).toMatchObject(event.linkId === 'honeypot' ? { classification: 'bot', reason: 'honeypot-link' } : HIT_FIXTURES.scannerClickingEveryLink.expect);
    expect(body.engagement).toMatchObject({ clicks: 0, contentClicks: 0, links: [] });
    expect(body.links).toEqual([]);
  });

  it('a click on the hidden honeypot link is a bot, and still redirected', async () => {
    const message = await createTrackedMessage(api.db, api.config, workspace.workspaceId, { sentAgoMs: offsetsOf(HIT_FIXTURES.honeypotLink)[0] });
    const response = await hit(message.clickPath('honeypot'), HIT_FIXTURES.honeypotLink);
    expect(response.status).toBe(302);
    expect(response.headers.get('location')).toBe('https://mail.acme.example/');
    const body = await status(message.messageId);
    expect(trackingEvents(body)).toEqual([expect.objectContaining({ type: 'click', linkId: 'honeypot', linkRole: null, ...HIT_FIXTURES.honeypotLink.expect })]);
    expect(body.engagement.clicks).toBe(0);
  });

  it('a person clicking the call to action fifteen minutes later is a human content click, redirected with UTM', async () => {
    const fixture = HIT_FIXTURES.personClickingCta;
    const message = await createTrackedMessage(api.db, api.config, workspace.workspaceId, { sentAgoMs: offsetsOf(fixture)[0] });
    const response = await hit(message.clickPath('review-cta'), fixture);
    expect(response.status).toBe(302);
    expect(response.headers.get('location')).toBe('https://acme.example/review?from=mail&utm_source=mail.acme.example&utm_medium=email&utm_campaign=transactional');
    expect(response.headers.get('cache-control')).toBe('no-store');
    const body = await status(message.messageId);
    expect(trackingEvents(body)).toEqual([
      { type: 'click', linkId: 'review-cta', linkRole: 'cta', linkUrl: 'https://acme.example/review?from=mail', createdAt: expect.any(String), bounceType: null, ...fixture.expect },
    ]);
    expect(body.engagement).toMatchObject({ clicks: 1, contentClicks: 1, lastLinkUrl: 'https://acme.example/review?from=mail', lastLinkRole: 'cta', links: ['https://acme.example/review?from=mail'] });
    expect(body.links).toEqual([
      { url: 'https://acme.example/review?from=mail', canonicalUrl: 'https://acme.example/review?from=mail', role: 'cta', isContent: true, count: 1, lastAt: expect.any(String) },
    ]);
  });

  it("a person's click on a UTM-tagged link is a touch for the message's contact; a scanner's HEAD on it is not", async () => {
    const contactId = randomUUID();
    await api.db.query('INSERT INTO contacts (id, workspace_id) VALUES ($1, $2)', { bind: [contactId, workspace.workspaceId] });
    const [clicked, scanned] = await Promise.all([1, 2].map(() => createTrackedMessage(api.db, api.config, workspace.workspaceId, { sentAgoMs: 15 * 60_000 })));
    await api.db.query('UPDATE messages SET contact_id = $2 WHERE id = ANY($1::uuid[])', { bind: [[clicked.messageId, scanned.messageId], contactId] });
    await hit(scanned.clickPath('review-cta'), HIT_FIXTURES.headRequest);
    await hit(clicked.clickPath('review-cta'), HIT_FIXTURES.personClickingCta);
    await api.tracking.buffer.flush(true);
    const touches = await api.db.query('SELECT contact_id, message_id, source, medium, campaign, url FROM utm_touches WHERE workspace_id = $1 AND contact_id = $2', {
      bind: [workspace.workspaceId, contactId],
      type: QueryTypes.SELECT,
    });
    expect(touches).toEqual([
      { contact_id: contactId, message_id: clicked.messageId, source: 'mail.acme.example', medium: 'email', campaign: 'transactional', url: 'https://acme.example/review?from=mail' },
    ]);
  });

  it('human clicks on the logo and social links count as clicks but not content clicks', async () => {
    const person = HIT_FIXTURES.personClickingCta;
    const message = await createTrackedMessage(api.db, api.config, workspace.workspaceId, { sentAgoMs: 3_600_000 });
    await hit(message.clickPath('l0'), person);
    await new Promise((resolve) => setTimeout(resolve, 1_100));
    await hit(message.clickPath('l3'), person);
    await new Promise((resolve) => setTimeout(resolve, 1_100));
    await hit(message.clickPath('l1'), person);
    const body = await status(message.messageId);
    expect(body.engagement).toMatchObject({ clicks: 3, contentClicks: 1, lastLinkRole: 'text', lastLinkUrl: 'https://acme.example/orders/42/' });
    expect(body.engagement.links.sort()).toEqual(['https://acme.example/', 'https://acme.example/orders/42/', 'https://twitter.com/acme']);
    expect(Object.fromEntries(body.links.map((link) => [link.role, link.isContent]))).toEqual({ logo: false, social: false, text: true });
  });

  it('a person clicking two links within a second is taken for a scanner', async () => {
    const message = await createTrackedMessage(api.db, api.config, workspace.workspaceId, { sentAgoMs: 3_600_000 });
    await hit(message.clickPath('l1'), HIT_FIXTURES.personClickingCta);
    await hit(message.clickPath('review-cta'), HIT_FIXTURES.personClickingCta);
    const body = await status(message.messageId);
    expect(trackingEvents(body).map((event) => [event.classification, event.reason])).toEqual([
      ['bot', 'link-burst'],
      ['bot', 'link-burst'],
    ]);
  });

  describe('forged and unknown tokens', () => {
    let message: TrackedMessage;
    beforeAll(async () => {
      message = await createTrackedMessage(api.db, api.config, workspace.workspaceId, { sentAgoMs: 3_600_000 });
    });
    const person = HIT_FIXTURES.personClickingCta;
    // One character of the signature changed.
    const forge = (path: string) => path.replace(/(\.o\.|\.\d+\.)(.)/, (_all, separator: string, first: string) => `${separator}${first === 'A' ? 'B' : 'A'}`);

    it('a forged click token answers 404 and redirects nowhere', async () => {
      for (const path of [forge(message.clickPath('review-cta')), '/t/c/nothing', `/t/c/${message.messageId.replace(/-/g, '')}.0.x`]) {
        const response = await hit(path, person);
        expect(response.status).toBe(404);
        expect(response.headers.get('location')).toBeNull();
      }
    });

    it('a genuine token for a link the message does not have answers 404', async () => {
      const beyond = message.clickPath('honeypot').replace(/\/t\/c\/([0-9a-f]{32})\.(\d+)\./, (_all, id: string) => `/t/c/${id}.99.`);
      expect((await hit(beyond, person)).status).toBe(404);
    });

    it('no parameter of the request can move the redirect: it goes to the stored target only', async () => {
      const response = await hit(`${message.clickPath('l1')}?url=https://evil.example/&target=https://evil.example/`, person);
      expect(response.status).toBe(302);
      expect(response.headers.get('location')).toMatch(/^https:\/\/acme\.example\/orders\/42\/\?utm_source=/);
    });

    it('the pixel answers an uncacheable image for a forged token and records nothing', async () => {
      const quiet = await createTrackedMessage(api.db, api.config, workspace.workspaceId, { sentAgoMs: 3_600_000 });
      for (const path of [forge(quiet.pixelPath), '/t/o/garbage.gif']) {
        const response = await hit(path, person);
        expect(response.status).toBe(200);
        expect(response.headers.get('content-type')).toBe('image/gif');
        expect(response.headers.get('cache-control')).toContain('no-store');
        expect(Buffer.from(await response.arrayBuffer()).subarray(0, 6).toString()).toBe('GIF89a');
      }
      const body = await status(quiet.messageId);
      expect(trackingEvents(body)).toEqual([]);
      expect(body.engagement).toMatchObject({ opensHuman: 0, opensMachine: 0 });
    });
  });

  it('per-link statistics count human clicks by canonical link and report machine clicks beside them', async () => {
    const other = await createTestWorkspace(api);
    const ask = api.as(other.apiKey);
    const first = await createTrackedMessage(api.db, api.config, other.workspaceId, { sentAgoMs: 3_600_000 });
    const second = await createTrackedMessage(api.db, api.config, other.workspaceId, { sentAgoMs: 3_600_000 });
    const third = await createTrackedMessage(api.db, api.config, other.workspaceId, { sentAgoMs: 3_600_000 });
    await hit(first.clickPath('review-cta'), HIT_FIXTURES.personClickingCta);
    await hit(second.clickPath('review-cta'), HIT_FIXTURES.personClickingCta);
    await hit(third.clickPath('l1'), HIT_FIXTURES.headRequest);
    await api.tracking.buffer.flush(true);

    const response = await ask('GET', '/emails/links');
    expect(response.status).toBe(200);
    expect((response.body as { data: unknown[] }).data).toEqual([
      {
        url: 'https://acme.example/review?from=mail', canonicalUrl: 'https://acme.example/review?from=mail', role: 'cta', isContent: true,
        uniqueClicks: 2, totalClicks: 2, machineClicks: 0, firstClickAt: expect.any(String), lastClickAt: expect.any(String), share: 100,
      },
      {
        url: 'https://acme.example/orders/42/', canonicalUrl: 'https://acme.example/orders/42', role: 'text', isContent: true,
        uniqueClicks: 0, totalClicks: 0, machineClicks: 1, firstClickAt: null, lastClickAt: null, share: 0,
      },
    ]);
    const later = await ask('GET', `/emails/links?from=${encodeURIComponent(new Date(Date.now() + 60_000).toISOString())}`);
    expect((later.body as { data: unknown[] }).data).toEqual([]);
  });

  it('hits still buffered when the API closes are all stored, with their counters', async () => {
    // No replay window: fifty identical opens stand for fifty people behind the one proxy, to fill the buffer.
    const other = await startApi({ TRUST_PROXY: 'loopback', TRACKING_FLUSH_INTERVAL_MS: '600000', TRACKING_REPLAY_WINDOW_MS: '0' });
    const message = await createTrackedMessage(other.db, other.config, workspace.workspaceId, { sentAgoMs: 3_600_000 });
    const google = HIT_FIXTURES.googleImageProxy;
    for (let i = 0; i < 50; i += 1) {
      await fetch(`${other.url}${message.pixelPath}`, { headers: { 'user-agent': google.userAgent, 'x-forwarded-for': google.ip } });
    }
    expect(other.tracking.buffer.waiting).toBe(50);
    await other.close();
    const [stored] = await api.db.query<{ events: string; opens_human: number }>(
      `SELECT (SELECT count(*) FROM message_events WHERE message_id = $1 AND type = 'open') AS events, opens_human FROM messages WHERE id = $1`,
      { bind: [message.messageId], type: QueryTypes.SELECT },
    );
    expect(stored).toEqual({ events: '50', opens_human: 50 });
  });
});
