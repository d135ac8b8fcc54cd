import { randomUUID } from 'node:crypto';
import { Writable } from 'node:stream';
import { NativeConnection, Worker } from '@temporalio/worker';
import { QueryTypes } from 'sequelize';
import { createAnalyticsSyncActivities } from '../../activities/analytics-sync';
import type { MatomoVisit } from '../../providers/matomo/visits';
import { configKeyring } from '../../core/config';
import { taskQueueName } from '../../core/task-queues';
import { blobStoreOptions, createBlobStore } from '../../db/blob-store';
import { type ApiHarness, type ApiResponse, startApi } from '../helpers/api-harness';
import { createTestKey, createTestWorkspace } from '../helpers/workspaces';
import { type MatomoStandIn, startMatomoStandIn } from '../helpers/matomo-stand-in';
import { workflowBundle } from '../../workers/workflow-bundle';

// The analytics sync end to end: the real API, the sync workflow on a control-queue worker of its own with
// the real activities, Postgres, the blob store (CSV uploads) and a Matomo stand-in speaking its HTTP API.
const prefix = `analytics-${randomUUID().slice(0, 8)}-`;
const logLines: string[] = [];
let api: ApiHarness;
let matomo: MatomoStandIn;
let workers: Worker[];
let running: Promise<unknown>;
let nativeConnection: NativeConnection;

beforeAll(async () => {
  matomo = await startMatomoStandIn();
  const logStream = new Writable({
    write(chunk: Buffer, _encoding, done) {
      logLines.push(...chunk.toString().split('\n').filter(Boolean));
      done();
    },
  });
  api = await startApi({ RATE_LIMIT_PER_SECOND: '1000', TASK_QUEUE_PREFIX: prefix, ANALYTICS_ALLOW_PRIVATE_TARGETS: 'true' }, { logStream });
  nativeConnection = await NativeConnection.connect({ address: api.config.TEMPORAL_ADDRESS });
  const blobs = createBlobStore(blobStoreOptions(api.config));
  await blobs.ensureBucket();
  const activities = createAnalyticsSyncActivities({ db: api.db, keyring: configKeyring(api.config), blobs, fetch: { allowPrivateTargets: true } });
  // The workflow on `control`, its pages on `bulk`, as workers/main.ts runs them.
  workers = [
    await Worker.create({ connection: nativeConnection, namespace: api.config.TEMPORAL_NAMESPACE, taskQueue: taskQueueName(prefix, 'control'), workflowBundle: await workflowBundle(), activities }),
    await Worker.create({ connection: nativeConnection, namespace: api.config.TEMPORAL_NAMESPACE, taskQueue: taskQueueName(prefix, 'bulk'), activities }),
  ];
  running = Promise.all(workers.map((worker) => worker.run()));
});
afterAll(async () => {
  for (const worker of workers) worker.shutdown();
  await running;
  await nativeConnection.close();
  await api.close();
  await matomo.close();
});
jest.setTimeout(120_000);

type Call = (method: string, path: string, body?: unknown) => Promise<ApiResponse>;
const bodyOf = <T = Record<string, unknown>>(response: ApiResponse) => response.body as T;
const HOUR = 3_600_000;
const DAY = 24 * HOUR;
/** Whole seconds, as Matomo's timestamps are. */
const secondsAgo = (ms: number) => Math.floor((Date.now() - ms) / 1000);
const tokens: string[] = [];

async function workspace() {
  const { workspaceId, apiKey, call } = await createTestWorkspace(api, { plan: 'pro' });
  return { workspaceId, apiKey, call };
}

async function contact(call: Call, address: string): Promise<string> {
  const response = await call('POST', '/contacts', { identities: [{ channel: 'email', address }] });
  expect(response.status).toBe(201);
  return bodyOf<{ id: string }>(response).id;
}

/** A Matomo site of its own with a fresh token (kept to check no response or log line ever shows one). */
function site(visits: MatomoVisit[], currency = 'EUR') {
  const token = `tok${randomUUID().replace(/-/g, '')}`;
  tokens.push(token);
  return matomo.addSite({ idSite: 1000 + tokens.length, token, currency, visits });
}

async function connect(call: Call, matomoSite: { idSite: number; token: string }, extra: Record<string, unknown> = {}) {
  const response = await call('PUT', '/integrations/analytics', { provider: 'matomo', baseUrl: matomo.url, siteId: matomoSite.idSite, tokenAuth: matomoSite.token, ...extra });
  expect(response.status).toBe(200);
  return response;
}

async function conversionRows(workspaceId: string) {
  return api.db.query<Record<string, unknown>>(
    "SELECT * FROM conversions WHERE workspace_id = $1 AND source = 'analytics' ORDER BY external_id",
    { bind: [workspaceId], type: QueryTypes.SELECT },
  );
}

/** A visit of `userId` with a goal `hoursAgo` and campaign parameters, as Live.getLastVisitsDetails gives it. */
function goalVisit(idVisit: number, userId: string | null, at: number, goal: { goalId: number; goalName: string; revenue: number | string }): MatomoVisit {
  return {
    idVisit,
    userId,
    lastActionTimestamp: at + 60,
    campaignSource: 'newsletter',
    campaignMedium: 'email',
    campaignName: 'spring-sale',
    actionDetails: [
      { type: 'action', timestamp: at - 30 },
      { type: 'goal', goalId: goal.goalId, goalName: goal.goalName, revenue: goal.revenue, timestamp: at },
    ],
  };
}

describe('POST /integrations/analytics/sync from Matomo', () => {
  it('records goals and orders of the window with value, currency, the visit\'s UTM and kind analytics; a second sync imports 0 and changes nothing', async () => {
    const { workspaceId, call } = await workspace();
    const ann = await contact(call, 'ann@example.com');
    const bob = await contact(call, 'bob@example.com');
    const goalAt = secondsAgo(2 * DAY);
    const orderAt = secondsAgo(DAY);
    const downloadAt = secondsAgo(3 * HOUR);
    const matomoSite = site([
      goalVisit(11, 'Ann@Example.com', goalAt, { goalId: 3, goalName: 'Signed up', revenue: 12.5 }),
      {
        idVisit: 12,
        userId: bob,
        siteCurrency: 'USD',
        lastActionTimestamp: orderAt + 5,
        referrerType: 'campaign',
        referrerName: 'black-friday',
        actionDetails: [
          { type: 'ecommerceOrder', orderId: 'A-1001', revenue: '99.90', timestamp: orderAt },
          { type: 'ecommerceAbandonedCart', revenue: 5, timestamp: orderAt },
        ],
      },
      goalVisit(13, null, downloadAt, { goalId: 4, goalName: 'Download', revenue: 0 }),
      // Outside a first sync's 30 days: not read.
      goalVisit(14, 'ann@example.com', secondsAgo(40 * DAY), { goalId: 3, goalName: 'Signed up', revenue: 1 }),
    ]);
    await connect(call, matomoSite, { goalNames: { '3': 'signup' } });

    const first = await call('POST', '/integrations/analytics/sync');
    expect(first).toMatchObject({ status: 200, body: { imported: 3 } });

    const annConversions = bodyOf<{ data: Array<Record<string, unknown>> }>(await call('GET', `/contacts/${ann}/conversions`)).data;
    expect(annConversions).toEqual([
      expect.objectContaining({
        name: 'signup', source: 'analytics', valueCents: 1250, currency: 'EUR', occurredAt: new Date(goalAt * 1000).toISOString(),
        utmSource: 'newsletter', utmMedium: 'email', utmCampaign: 'spring-sale', attributedKind: 'analytics', touchpoints: 0,
      }),
    ]);
    const bobConversions = bodyOf<{ data: Array<Record<string, unknown>> }>(await call('GET', `/contacts/${bob}/conversions`)).data;
    // The visit's own currency wins over the site's; core Matomo's campaign referrer names the campaign.
    expect(bobConversions).toEqual([expect.objectContaining({ name: 'order', valueCents: 9990, currency: 'USD', utmSource: null, utmCampaign: 'black-friday', attributedKind: 'analytics' })]);

    const utm = bodyOf<{ data: Array<Record<string, unknown>>; total: number }>(await call('GET', '/utm/conversions?attribution=last'));
    expect(utm.total).toBe(3);
    expect(utm.data).toEqual(expect.arrayContaining([
      expect.objectContaining({ name: 'Download', contactId: null, valueCents: 0, source: 'newsletter', campaign: 'spring-sale' }),
    ]));

    const before = await conversionRows(workspaceId);
    expect(before.map((row) => row.external_id)).toEqual([`11:3:${goalAt}`, `13:4:${downloadAt}`, 'order:A-1001']);
    const again = await call('POST', '/integrations/analytics/sync');
    expect(again).toMatchObject({ status: 200, body: { imported: 0 } });
    expect(await conversionRows(workspaceId)).toEqual(before);

    const connection = bodyOf(await call('GET', '/integrations/analytics'));
    expect(connection).toMatchObject({ configured: true, provider: 'matomo', siteId: matomoSite.idSite, currency: 'EUR', goalNames: { '3': 'signup' }, lastSync: { status: 'succeeded', imported: 0, error: null } });
    expect(connection).not.toHaveProperty('tokenAuth');
    // The cursor is the last action of the latest visit read.
    expect(connection.syncCursor).toBe(new Date((downloadAt + 60) * 1000).toISOString());
  });

  it('a contact with a click of ours in the window keeps our touch\'s UTM and kind, not the visit\'s', async () => {
    const { workspaceId, call } = await workspace();
    const ann = await contact(call, 'ann@example.com');
    const goalAt = secondsAgo(DAY);
    await api.db.query(
      `INSERT INTO utm_touches (id, workspace_id, contact_id, source, medium, campaign, url, occurred_at, is_content, canonical_url, kind)
       VALUES ($1, $2, $3, 'mail.example', 'email', 'Welcome', 'https://shop.example/?utm_source=mail.example', $4, true, 'https://shop.example/', 'campaign')`,
      { bind: [randomUUID(), workspaceId, ann, new Date(goalAt * 1000 - HOUR)] },
    );
    await connect(call, site([goalVisit(21, 'ann@example.com', goalAt, { goalId: 1, goalName: 'Purchase', revenue: 30 })]));
    expect(await call('POST', '/integrations/analytics/sync')).toMatchObject({ status: 200, body: { imported: 1 } });
    const [conversion] = bodyOf<{ data: Array<Record<string, unknown>> }>(await call('GET', `/contacts/${ann}/conversions`)).data;
    expect(conversion).toMatchObject({ utmSource: 'mail.example', utmCampaign: 'Welcome', attributedKind: 'campaign', touchpoints: 1 });
  });

  it('pages through every visit 100 at a time, oldest first, with the token only in the POST body', async () => {
    const { workspaceId, call } = await workspace();
    const base = secondsAgo(5 * DAY);
    const visits = Array.from({ length: 230 }, (_, index) => goalVisit(5000 + index, null, base + index * 60, { goalId: 2, goalName: 'Lead', revenue: 1 }));
    const matomoSite = site(visits);
    await connect(call, matomoSite);
    const callsBefore = matomo.calls.length;
    expect(await call('POST', '/integrations/analytics/sync')).toMatchObject({ status: 200, body: { imported: 230 } });
    const pages = matomo.calls.slice(callsBefore).filter((made) => made.query.method === 'Live.getLastVisitsDetails' && made.query.idSite === String(matomoSite.idSite));
    expect(pages.map((made) => [made.query.filter_offset, made.query.filter_limit, made.query.filter_sort_order, made.query.period])).toEqual([
      ['0', '100', 'asc', 'range'], ['100', '100', 'asc', 'range'], ['200', '100', 'asc', 'range'],
    ]);
    expect(pages.every((made) => made.tokenInBody && !('token_auth' in made.query))).toBe(true);
    expect((await conversionRows(workspaceId)).length).toBe(230);
  });
});

describe('a sync that outlasts the request', () => {
  let impatient: ApiHarness;
  beforeAll(async () => {
    // The same deployment, with an API that waits 300 ms for a sync instead of 6 s.
    impatient = await startApi({ RATE_LIMIT_PER_SECOND: '1000', TASK_QUEUE_PREFIX: prefix, ANALYTICS_ALLOW_PRIVATE_TARGETS: 'true' }, { analyticsSyncWaitMs: 300 });
  });
  afterAll(() => impatient.close());

  /** Reads a 202's status URL until the sync is no longer running. */
  async function awaitStatus(call: Call, statusUrl: string): Promise<Record<string, unknown>> {
    const path = statusUrl.replace('/api/v1', '');
    let status = await call('GET', path);
    for (let waited = 0; bodyOf(status).status === 'running' && waited < 20_000; waited += 200) {
      await new Promise((resolve) => setTimeout(resolve, 200));
      status = await call('GET', path);
    }
    expect(status.status).toBe(200);
    return bodyOf(status);
  }

  it('answers 202 with the count so far; a second request while it runs joins it; the connection shows its end', async () => {
    const { workspaceId, apiKey, call } = await workspace();
    const base = secondsAgo(2 * DAY);
    const matomoSite = site(Array.from({ length: 150 }, (_, index) => goalVisit(7000 + index, null, base + index * 60, { goalId: 1, goalName: 'Lead', revenue: 2 })));
    await connect(call, matomoSite);
    const slowCall = impatient.as(apiKey);
    matomo.slowVisits(2_000);
    try {
      const started = await slowCall('POST', '/integrations/analytics/sync');
      expect(started).toMatchObject({ status: 202, body: { imported: 0, status: 'running', syncId: expect.stringMatching(/^matomo\./) } });
      const { statusUrl, syncId } = bodyOf<{ statusUrl: string; syncId: string }>(started);
      expect(statusUrl).toBe(`/api/v1/integrations/analytics/syncs/${syncId}`);
      expect(started.headers.get('location')).toBe(statusUrl);
      expect(await call('GET', statusUrl.replace('/api/v1', ''))).toMatchObject({ status: 200, body: { syncId, status: 'running', error: null } });
      const joined = await slowCall('POST', '/integrations/analytics/sync');
      expect(joined.status).toBe(202);
      expect(bodyOf<{ imported: number }>(joined).imported).toBeLessThanOrEqual(100);
      // Both status URLs report the one sync's imported once it is done.
      expect(await awaitStatus(call, statusUrl)).toEqual({ syncId, status: 'succeeded', imported: 150, error: null });
      expect(await awaitStatus(call, bodyOf<{ statusUrl: string }>(joined).statusUrl)).toMatchObject({ status: 'succeeded', imported: 150 });
      // Another workspace's key cannot read it; a made-up id names nothing.
      const other = await workspace();
      expect(await other.call('GET', statusUrl.replace('/api/v1', ''))).toMatchObject({ status: 404, body: { error: 'not_found' } });
      expect(await call('GET', '/integrations/analytics/syncs/nothing')).toMatchObject({ status: 404, body: { error: 'not_found' } });
      let connection = bodyOf(await call('GET', '/integrations/analytics'));
      for (let waited = 0; (connection.lastSync as { status: string }).status === 'running' && waited < 20_000; waited += 200) {
        await new Promise((resolve) => setTimeout(resolve, 200));
        connection = bodyOf(await call('GET', '/integrations/analytics'));
      }
      expect(connection.lastSync).toMatchObject({ status: 'succeeded', imported: 150, error: null });
    } finally {
      matomo.slowVisits(0);
    }
    const firstPages = matomo.calls.filter((made) => made.query.idSite === String(matomoSite.idSite) && made.query.method === 'Live.getLastVisitsDetails' && made.query.filter_offset === '0');
    expect(firstPages).toHaveLength(1);
    expect((await conversionRows(workspaceId)).length).toBe(150);
  });

  it('a CSV sync that outlasts the request answers 202 too; its status URL reports imported when done, and a failed one its reason', async () => {
    const { apiKey, call } = await workspace();
    const instant = await startApi({ RATE_LIMIT_PER_SECOND: '1000', TASK_QUEUE_PREFIX: prefix, ANALYTICS_ALLOW_PRIVATE_TARGETS: 'true' }, { analyticsSyncWaitMs: 0 });
    try {
      const upload = async (csv: string) =>
        bodyOf<{ attachment: { id: string } }>(await call('POST', '/attachments', { filename: 'c.csv', contentType: 'text/csv', content: Buffer.from(csv).toString('base64') })).attachment.id;
      const good = await upload('external_id,email,name,value,occurred_at\ny-1,ann@example.com,purchase,12,2026-03-10T12:00:00Z\ny-2,bob@example.com,purchase,3,2026-03-10T13:00:00Z\n');
      const started = await instant.as(apiKey)('POST', '/integrations/analytics/sync', { attachmentId: good });
      expect(started).toMatchObject({ status: 202, body: { status: 'running', syncId: expect.stringMatching(new RegExp(`^csv\\.${good}\\.`)) } });
      expect(await awaitStatus(call, bodyOf<{ statusUrl: string }>(started).statusUrl)).toMatchObject({ status: 'succeeded', imported: 2, error: null });

      const bad = await upload('external_id,email,name,value,occurred_at\nz-1,ann@example.com,purchase,twelve,2026-03-10T12:00:00Z\n');
      const refused = await instant.as(apiKey)('POST', '/integrations/analytics/sync', { attachmentId: bad });
      expect(refused.status).toBe(202);
      expect(await awaitStatus(call, bodyOf<{ statusUrl: string }>(refused).statusUrl)).toMatchObject({ status: 'failed', error: expect.stringContaining('line 2') });
    } finally {
      await instant.close();
    }
  });
});

describe('failures and refusals', () => {
  it('PUT with a token Matomo refuses answers 422 naming tokenAuth and stores nothing', async () => {
    const { call } = await workspace();
    const matomoSite = site([]);
    const refused = await call('PUT', '/integrations/analytics', { provider: 'matomo', baseUrl: matomo.url, siteId: matomoSite.idSite, tokenAuth: 'not-the-token' });
    expect(refused.status).toBe(422);
    expect(bodyOf<{ error: { fieldErrors: Record<string, string[]> } }>(refused).error.fieldErrors.tokenAuth[0]).toMatch(/Matomo refused the token \(401\)/);
    const otherSite = await call('PUT', '/integrations/analytics', { provider: 'matomo', baseUrl: matomo.url, siteId: 999_999, tokenAuth: matomoSite.token });
    expect(bodyOf<{ error: { fieldErrors: Record<string, string[]> } }>(otherSite).error.fieldErrors.tokenAuth[0]).toMatch(/view' access for the website id = 999999/);
    expect(bodyOf(await call('GET', '/integrations/analytics'))).toEqual({ configured: false });
  });

  it('a token revoked after connecting fails the sync: 502 upstream_error, and the reason stays on the connection', async () => {
    const { call } = await workspace();
    const matomoSite = site([goalVisit(31, null, secondsAgo(HOUR), { goalId: 1, goalName: 'Lead', revenue: 1 })]);
    await connect(call, matomoSite);
    matomoSite.token = `revoked-${randomUUID()}`;
    const failed = await call('POST', '/integrations/analytics/sync');
    expect(failed.status).toBe(502);
    expect(failed.body).toMatchObject({ error: 'upstream_error', message: expect.stringMatching(/^Matomo refused the token \(401\): Unable to authenticate/) });
    expect(bodyOf(await call('GET', '/integrations/analytics'))).toMatchObject({
      lastSync: { status: 'failed', imported: 0, error: expect.stringMatching(/Matomo refused the token/), finishedAt: expect.any(String) },
      syncCursor: null,
    });
  });

  it('a Matomo answering 503 is retried, then the sync fails with 502 and the reason kept', async () => {
    const { call } = await workspace();
    await connect(call, site([goalVisit(41, null, secondsAgo(HOUR), { goalId: 1, goalName: 'Lead', revenue: 1 })]));
    matomo.failWith(503);
    const callsBefore = matomo.calls.length;
    try {
      const failed = await call('POST', '/integrations/analytics/sync');
      expect(failed).toMatchObject({ status: 502, body: { error: 'upstream_error', message: 'Matomo answered 503' } });
    } finally {
      matomo.failWith(null);
    }
    expect(matomo.calls.length - callsBefore).toBe(3);
    expect(bodyOf(await call('GET', '/integrations/analytics'))).toMatchObject({ lastSync: { status: 'failed', error: 'Matomo answered 503' } });
    // Matomo back: the next sync records what the failed one could not.
    expect(await call('POST', '/integrations/analytics/sync')).toMatchObject({ status: 200, body: { imported: 1 } });
  });

  it('no connection and no attachment answers 409 conflict; an unknown attachment 422', async () => {
    const { call } = await workspace();
    expect(await call('POST', '/integrations/analytics/sync', {})).toMatchObject({ status: 409, body: { error: 'conflict' } });
    const unknown = await call('POST', '/integrations/analytics/sync', { attachmentId: randomUUID() });
    expect(unknown.status).toBe(422);
    expect(bodyOf<{ error: { fieldErrors: Record<string, string[]> } }>(unknown).error.fieldErrors.attachmentId).toEqual(['No attachment with this id']);
  });

  it('DELETE forgets the connection (404 when there is none); recorded conversions stay', async () => {
    const { workspaceId, call } = await workspace();
    await connect(call, site([goalVisit(51, null, secondsAgo(HOUR), { goalId: 1, goalName: 'Lead', revenue: 1 })]));
    expect(await call('POST', '/integrations/analytics/sync')).toMatchObject({ status: 200, body: { imported: 1 } });
    expect(await call('DELETE', '/integrations/analytics')).toMatchObject({ status: 200, body: { configured: false } });
    expect(await call('DELETE', '/integrations/analytics')).toMatchObject({ status: 404 });
    expect((await conversionRows(workspaceId)).length).toBe(1);
  });
});

describe('the CSV upload', () => {
  async function upload(call: Call, csv: string): Promise<string> {
    const response = await call('POST', '/attachments', { filename: 'conversions.csv', contentType: 'text/csv', content: Buffer.from(csv).toString('base64') });
    expect(response.status).toBe(201);
    return bodyOf<{ attachment: { id: string } }>(response).attachment.id;
  }

  it('imports its rows with contacts by email or id; the same file again imports 0', async () => {
    const { workspaceId, call } = await workspace();
    const ann = await contact(call, 'ann@example.com');
    const bob = await contact(call, 'bob@example.com');
    const csv = [
      'external_id,email,contact_id,name,value,currency,occurred_at,utm_source,utm_medium,utm_campaign',
      'r-1,ANN@example.com,,purchase,19.99,eur,2026-03-10T12:00:00Z,google,cpc,"spring, sale"',
      `r-2,,${bob},signup,,,2026-03-11T08:30:00+01:00,,,`,
      'r-3,nobody@example.com,,purchase,5,USD,2026-03-12T00:00:00Z,,,',
    ].join('\r\n');
    const attachmentId = await upload(call, csv);
    expect(await call('POST', '/integrations/analytics/sync', { attachmentId })).toMatchObject({ status: 200, body: { imported: 3 } });
    const rows = await conversionRows(workspaceId);
    expect(rows.map(({ external_id, contact_id, name, value_cents, currency, utm_source, utm_campaign, attributed_kind }) => ({ external_id, contact_id, name, value_cents, currency, utm_source, utm_campaign, attributed_kind }))).toEqual([
      { external_id: 'r-1', contact_id: ann, name: 'purchase', value_cents: '1999', currency: 'EUR', utm_source: 'google', utm_campaign: 'spring, sale', attributed_kind: 'analytics' },
      { external_id: 'r-2', contact_id: bob, name: 'signup', value_cents: '0', currency: null, utm_source: null, utm_campaign: null, attributed_kind: 'analytics' },
      { external_id: 'r-3', contact_id: null, name: 'purchase', value_cents: '500', currency: 'USD', utm_source: null, utm_campaign: null, attributed_kind: 'analytics' },
    ]);
    expect(await call('POST', '/integrations/analytics/sync', { attachmentId: await upload(call, csv) })).toMatchObject({ status: 200, body: { imported: 0 } });
    expect(await conversionRows(workspaceId)).toEqual(rows);
  });

  it('a row that breaks a rule answers 422 naming its line', async () => {
    const { call } = await workspace();
    const attachmentId = await upload(call, 'external_id,email,name,value,occurred_at\nx-1,ann@example.com,purchase,12,2026-03-10T12:00:00Z\nx-2,ann@example.com,purchase,twelve,2026-03-10T12:00:00Z\n');
    const refused = await call('POST', '/integrations/analytics/sync', { attachmentId });
    expect(refused.status).toBe(422);
    expect(bodyOf<{ error: { fieldErrors: Record<string, string[]> } }>(refused).error.fieldErrors.attachmentId).toEqual(['line 3: value is not a number from 0 to 1000000000000']);
  });
});

describe('access', () => {
  it('another workspace sees neither the connection nor its conversions, and its own sync is 409', async () => {
    const owner = await workspace();
    await connect(owner.call, site([goalVisit(61, null, secondsAgo(HOUR), { goalId: 1, goalName: 'Lead', revenue: 1 })]));
    expect(await owner.call('POST', '/integrations/analytics/sync')).toMatchObject({ status: 200, body: { imported: 1 } });
    const other = await workspace();
    expect(bodyOf(await other.call('GET', '/integrations/analytics'))).toEqual({ configured: false });
    expect(bodyOf<{ total: number }>(await other.call('GET', '/utm/conversions')).total).toBe(0);
    expect(await other.call('POST', '/integrations/analytics/sync')).toMatchObject({ status: 409 });
    expect(await other.call('DELETE', '/integrations/analytics')).toMatchObject({ status: 404 });
  });

  it('utm:read may read the connection but not change or sync it; other scopes may not read it', async () => {
    const { workspaceId } = await workspace();
    const reader = api.as((await createTestKey(api, workspaceId, ['utm:read'])).apiKey);
    const stranger = api.as((await createTestKey(api, workspaceId, ['contacts:read'])).apiKey);
    expect((await reader('GET', '/integrations/analytics')).status).toBe(200);
    expect(await reader('PUT', '/integrations/analytics', { provider: 'matomo', baseUrl: matomo.url, siteId: 1, tokenAuth: 'x' })).toMatchObject({ status: 403, body: { need: 'integrations:write' } });
    expect(await reader('POST', '/integrations/analytics/sync')).toMatchObject({ status: 403, body: { need: 'integrations:write' } });
    expect(await reader('DELETE', '/integrations/analytics')).toMatchObject({ status: 403 });
    expect((await stranger('GET', '/integrations/analytics')).status).toBe(403);
  });

  it('no Matomo token ever appears in a response body or a log line', async () => {
    const { call } = await workspace();
    const matomoSite = site([]);
    const responses = [await connect(call, matomoSite), await call('GET', '/integrations/analytics'), await call('POST', '/integrations/analytics/sync')];
    expect(responses.map((response) => response.status)).toEqual([200, 200, 200]);
    const answered = responses.map((response) => JSON.stringify(response.body)).join('\n');
    expect(tokens.length).toBeGreaterThan(5);
    expect(logLines.length).toBeGreaterThan(0);
    for (const token of tokens) {
      expect(answered).not.toContain(token);
      expect(logLines.find((line) => line.includes(token))).toBeUndefined();
    }
  });
});
