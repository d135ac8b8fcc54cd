import { randomUUID } from 'node:crypto';
import { type ApiHarness, type ApiResponse, startApi } from '../helpers/api-harness';
import { createTestKey, addTestDomain, createTestWorkspace } from '../helpers/workspaces';
import { queueMessages } from '../helpers/factories';
import { standInResolver } from '../helpers/ssrf-stand-in';
import { startTelegramStandIn } from '../helpers/telegram-stand-in';
import { startTwilioStandIn } from '../helpers/twilio-stand-in';

/**
 * The isolation matrix: every documented route that names a resource in its path is called with workspace
 * B's key and the id of workspace A's resource. Each answers 404 exactly as for an id that does not exist,
 * and A's resource reads the same afterwards. The routes come from the served OpenAPI document, so a route
 * added later without a factory here fails the walk instead of slipping past it.
 */

interface DocumentedRoute {
  method: string;
  /** As documented: `/api/v1/campaigns/{id}/send`. */
  template: string;
  /** Documented query parameters that name a resource (`segmentId`), so filters are walked too. */
  idFilters: string[];
}

type Call = (method: string, path: string, body?: unknown) => Promise<ApiResponse>;

interface Seed {
  /** The value of the route's first path parameter. */
  id: string;
  /** A's view of the resource, through A's key: must not change when B calls. */
  read: () => Promise<unknown>;
}

/** Everything of A's a factory may need: its caller, ids and the marker its names carry. */
interface Owner {
  workspaceId: string;
  call: Call;
  marker: string;
}

const bodyOf = (response: ApiResponse) => response.body as Record<string, unknown>;

/** The id of a created resource, whether answered bare (`{ id }`) or wrapped (`{ webhook: { id } }`). */
function createdId(response: ApiResponse): string {
  const body = bodyOf(response);
  const wrapped = Object.values(body).find((value): value is { id: string } => typeof value === 'object' && value !== null && 'id' in value);
  const id = typeof body.id === 'string' ? body.id : wrapped?.id;
  if (response.status >= 300 || !id) throw new Error(`create failed: ${response.status} ${JSON.stringify(body)}`);
  return id;
}

/** Reads one row of a list endpoint (for resources without a detail route). */
const rowOf = (call: Call, path: string, key: string, id: string) => async () => {
  const rows = Object.values(bodyOf(await call('GET', path))).find(Array.isArray) as Array<Record<string, unknown>>;
  return rows.find((row) => row[key] === id) ?? null;
};

const detail = (call: Call, path: string) => async () => {
  const response = await call('GET', path);
  return { status: response.status, body: response.body };
};

const resolveHost = standInResolver({ 'hooks.example.com': ['93.184.216.34'] });

describe('workspaces are isolated on every route', () => {
  let api: ApiHarness;
  let routes: DocumentedRoute[];

  beforeAll(async () => {
    // Queues of its own, which no worker polls: workflows A starts (imports, an analytics sync) stay as started.
    api = await startApi({ RATE_LIMIT_PER_SECOND: '1000', TASK_QUEUE_PREFIX: `iso-${randomUUID().slice(0, 8)}-` }, { webhookFetch: { resolveHost }, analyticsSyncWaitMs: 0 });
    type Operation = { parameters?: Array<{ name: string; in: string }> };
    const document = (await api.call('GET', '/api/v1/openapi.json')).body as { paths: Record<string, Record<string, Operation>> };
    routes = Object.entries(document.paths).flatMap(([template, operations]) =>
      Object.entries(operations).map(([method, operation]) => ({
        method: method.toUpperCase(),
        template,
        idFilters: (operation.parameters ?? []).filter((parameter) => parameter.in === 'query' && parameter.name.endsWith('Id')).map((parameter) => parameter.name),
      })),
    );
  });
  afterAll(() => api.close());

  /** One factory per resource, keyed by the path segment after /api/v1, creating it in A. */
  const factories: Record<string, (owner: Owner) => Promise<Seed>> = {
    'api-keys': async ({ workspaceId, call }) => {
      const { keyId } = await createTestKey(api, workspaceId, ['email:send']);
      return { id: keyId, read: rowOf(call, '/api-keys', 'id', keyId) };
    },
    attachments: async ({ call, marker }) => {
      const id = createdId(await call('POST', '/attachments', { filename: `${marker}.pdf`, content: Buffer.from('%PDF-1.7').toString('base64') }));
      // The download URL is signed afresh on every read (its X-Amz-Date moves each second): compare the file.
      const read = detail(call, `/attachments/${id}`);
      return { id, read: async () => {
        const { status, body } = await read();
        return { status, attachment: (body as { attachment?: unknown }).attachment };
      } };
    },
    automations: async ({ call, marker }) => {
      const graph = { entry: 'wait', nodes: [{ id: 'wait', type: 'wait', duration: 'P1D', next: null }] };
      const id = createdId(await call('POST', '/automations', { name: marker, trigger: { event: marker }, graph }));
      await call('POST', `/automations/${id}/activate`);
      return { id, read: detail(call, `/automations/${id}`) };
    },
    campaigns: async ({ workspaceId, call, marker }) => {
      const domain = (await addTestDomain(api, workspaceId)).domain;
      const listId = createdId(await call('POST', '/lists', { name: `${marker} audience` }));
      const id = createdId(await call('POST', '/campaigns', { name: marker, fromAddress: `news@${domain}`, listId, subject: marker, text: 'T' }));
      return { id, read: detail(call, `/campaigns/${id}`) };
    },
    // Orders and products share the prefix: the product's externalId is the order's id, so both routes get A's seed.
    commerce: async ({ call, marker }) => {
      const id = createdId(await call('POST', '/commerce/orders', { externalId: marker, email: `${marker}@example.com`, total: 12.5, currency: 'USD', placedAt: new Date().toISOString() }));
      await call('PUT', '/commerce/products', { products: [{ externalId: id, title: marker }] });
      return { id, read: async () => ({ order: await detail(call, `/commerce/orders/${id}`)(), product: await rowOf(call, '/commerce/products', 'externalId', id)() }) };
    },
    contacts: async ({ call, marker }) => {
      const id = createdId(await call('POST', '/contacts', { identities: [{ channel: 'email', address: `${marker}@example.com` }], attributes: { plan: marker } }));
      return { id, read: detail(call, `/contacts/${id}`) };
    },
    imports: async ({ call, marker }) => {
      const attachmentId = createdId(await call('POST', '/attachments', { filename: `${marker}.csv`, content: Buffer.from(`email\n${marker}@example.com\n`).toString('base64') }));
      const id = createdId(await call('POST', '/imports', { provider: 'csv', attachmentId, mapping: { email: 'email' } }));
      // No worker runs here, so the job stays queued while B calls.
      return { id, read: detail(call, `/imports/${id}`) };
    },
    'custom-fields': async ({ call, marker }) => {
      const id = createdId(await call('POST', '/custom-fields', { key: `f_${marker.slice(-8)}`, label: marker, type: 'text' }));
      return { id, read: rowOf(call, '/custom-fields', 'id', id) };
    },
    domains: async ({ workspaceId, call }) => {
      const name = (await addTestDomain(api, workspaceId)).domain;
      const row = (await rowOf(call, '/domains', 'name', name)()) as { id: string };
      return { id: row.id, read: detail(call, `/domains/${row.id}`) };
    },
    'email-rules': async ({ call, marker }) => {
      const id = createdId(await call('POST', '/email-rules', { action: 'block', matchType: 'address', value: `${marker}@example.com` }));
      return { id, read: rowOf(call, '/email-rules', 'id', id) };
    },
    inboxes: async ({ workspaceId, call, marker }) => {
      const domain = (await addTestDomain(api, workspaceId)).domain;
      const id = createdId(await call('POST', '/inboxes', { domain, localPart: marker.slice(0, 40), displayName: 'Owner' }));
      // A draft gives the inbox a thread and a message, so every sub-route has something of A's to leak or change.
      await call('POST', `/inboxes/${id}/drafts`, { to: `${marker}@example.com`, subject: marker, text: 'Draft' });
      return {
        id,
        read: async () => ({ inbox: await detail(call, `/inboxes/${id}`)(), drafts: await detail(call, `/inboxes/${id}/threads?folder=drafts`)() }),
      };
    },
    emails: async ({ workspaceId, call, marker }) => {
      const [id] = await queueMessages(api.db, workspaceId, { kind: 'transactional', count: 1, from: `a@${marker}.example.com`, toPrefix: marker });
      return { id, read: detail(call, `/emails/${id}`) };
    },
    messages: async ({ workspaceId, call, marker }) => {
      const [id] = await queueMessages(api.db, workspaceId, { kind: 'transactional', count: 1, from: `a@${marker}.example.com`, toPrefix: marker });
      return { id, read: detail(call, `/messages/${id}`) };
    },
    // The analytics sync's status route: A's CSV sync, answered 202 at once and left running (no worker here).
    integrations: async ({ call, marker }) => {
      const attachmentId = createdId(await call('POST', '/attachments', { filename: `${marker}.csv`, content: Buffer.from('external_id,name,occurred_at\n').toString('base64') }));
      const started = await call('POST', '/integrations/analytics/sync', { attachmentId });
      const id = (bodyOf(started) as { syncId?: string }).syncId;
      if (started.status !== 202 || !id) throw new Error(`sync not started: ${started.status} ${JSON.stringify(started.body)}`);
      return { id, read: detail(call, `/integrations/analytics/syncs/${id}`) };
    },
    lists: async ({ call, marker }) => {
      const id = createdId(await call('POST', '/lists', { name: marker }));
      return { id, read: rowOf(call, '/lists', 'id', id) };
    },
    segments: async ({ call, marker }) => {
      const definition = { operator: 'and', rules: [{ type: 'attribute', key: 'plan', operator: 'eq', value: marker }] };
      const id = createdId(await call('POST', '/segments', { name: marker, definition }));
      return { id, read: detail(call, `/segments/${id}`) };
    },
    suppressions: async ({ call, marker }) => {
      const address = `${marker}@example.com`;
      await call('POST', '/suppressions', { address });
      return { id: encodeURIComponent(address), read: rowOf(call, '/suppressions', 'address', address) };
    },
    tags: async ({ call, marker }) => {
      const id = createdId(await call('POST', '/tags', { name: marker }));
      return { id, read: rowOf(call, '/tags', 'id', id) };
    },
    templates: async ({ call, marker }) => {
      const id = createdId(await call('POST', '/templates', { name: marker, subject: marker, body: '<p>Hi {{name}}</p>' }));
      return { id, read: detail(call, `/templates/${id}`) };
    },
    webhooks: async ({ call, marker }) => {
      const id = createdId(await call('POST', '/webhooks', { url: 'https://hooks.example.com/in', events: ['email.sent'], description: marker }));
      return { id, read: detail(call, `/webhooks/${id}`) };
    },
  };

  /** Bodies valid under each route's schema, so B's request reaches the lookup rather than stopping at 422. */
  const bodies: Record<string, unknown> = {
    'PATCH /automations/{id}': { name: 'taken' },
    'POST /automations/{id}/enroll': { contactIds: [randomUUID()] },
    'PATCH /campaigns/{id}': { name: 'taken' },
    'POST /campaigns/{id}/send': { scheduledAt: new Date(Date.now() + 86_400_000).toISOString() },
    'POST /contacts/{id}/tags': { tags: ['taken'] },
    'DELETE /contacts/{id}/tags': { tags: ['taken'] },
    'PATCH /custom-fields/{id}': { archived: true },
    'PATCH /domains/{id}': { defaultFromName: 'Taken' },
    'PATCH /inboxes/{id}': { displayName: 'Taken', status: 'disabled' },
    'POST /inboxes/{id}/send': { to: 'taken@example.com', subject: 'Taken', text: 'Taken' },
    'POST /inboxes/{id}/drafts': { to: 'taken@example.com', subject: 'Taken', text: 'Taken' },
    'PATCH /inboxes/{id}/threads/{threadId}': { folder: 'archived' },
    'POST /inboxes/{id}/threads/{threadId}/reply': { text: 'Taken' },
    'POST /lists/{id}/contacts': { contactIds: [randomUUID()] },
    'DELETE /lists/{id}/contacts': { contactIds: [randomUUID()] },
    'PATCH /segments/{id}': { name: 'taken' },
    'PATCH /templates/{id}': { name: 'taken' },
    'POST /templates/{id}/render': {},
    'PATCH /webhooks/{id}': { description: 'taken' },
    'PUT /attachments/{id}': { content: Buffer.from('taken').toString('base64') },
  };

  async function workspace(): Promise<Owner> {
    const { workspaceId, call } = await createTestWorkspace(api, { plan: 'pro' });
    return { workspaceId, call, marker: `iso${randomUUID().replace(/-/g, '')}` };
  }

  it('another workspace\'s id answers 404 on every route that takes one, and the resource is unchanged', async () => {
    const withId = routes.filter((route) => /\{[^}]+\}/.test(route.template));
    expect(withId.length).toBeGreaterThan(30);
    const owner = await workspace();
    const intruder = await workspace();
    const seeds = new Map<string, Seed>();
    const missing: string[] = [];
    const outcomes: Array<{ route: string; status: number; error: unknown }> = [];

    for (const { method, template } of withId) {
      const relative = template.replace(/^\/api\/v1/, '');
      const resource = relative.split('/')[1];
      const factory = factories[resource];
      if (!factory) {
        missing.push(`${method} ${template}`);
        continue;
      }
      // A fresh resource per resource type, seeded once: B's calls must not have changed it by the end.
      if (!seeds.has(resource)) seeds.set(resource, await factory(owner));
      const seed = seeds.get(resource) as Seed;
      const before = await seed.read();
      // The first parameter is A's resource; any further one (a delivery of that webhook) is a fresh uuid.
      let first = true;
      const path = relative.replace(/\{[^}]+\}/g, () => {
        const value = first ? seed.id : randomUUID();
        first = false;
        return value;
      });
      const key = `${method} ${relative}`;
      const response = await intruder.call(method, path, bodies[key]);
      outcomes.push({ route: key, status: response.status, error: (bodyOf(response) ?? {}).error });
      expect({ route: key, after: await seed.read() }).toEqual({ route: key, after: before });
    }

    // A documented route naming a resource no factory creates is a route this matrix does not prove.
    expect(missing).toEqual([]);
    expect(outcomes.filter((outcome) => outcome.status !== 404 || outcome.error !== 'not_found')).toEqual([]);
    // The walk reached every resource the document names.
    expect([...seeds.keys()].sort()).toEqual(Object.keys(factories).sort());
  });

  it('lists, counts, usage and previews asked with another workspace\'s key show none of its rows', async () => {
    const owner = await workspace();
    const seeds: Record<string, string> = {};
    for (const [resource, factory] of Object.entries(factories)) seeds[resource] = (await factory(owner)).id;
    const ids = Object.values(seeds);
    const intruder = await workspace();
    const expectNoLeak = (request: string, response: ApiResponse) => {
      const text = JSON.stringify(response.body);
      expect({ request, leaks: ids.filter((id) => text.includes(id)), marker: text.includes(owner.marker) }).toEqual({ request, leaks: [], marker: false });
    };

    const reads = routes.filter((route) => route.method === 'GET' && !/\{[^}]+\}/.test(route.template) && !route.template.endsWith('openapi.json'));
    expect(reads.length).toBeGreaterThan(10);
    for (const { template } of reads) {
      const response = await intruder.call('GET', template.replace(/^\/api\/v1/, ''));
      expect({ template, status: response.status }).toEqual({ template, status: 200 });
      expectNoLeak(template, response);
    }

    // Filtering by A's ids: refused as unknown (404) or answered empty, never with A's rows.
    const filterResources: Record<string, string> = { tagId: 'tags', listId: 'lists', segmentId: 'segments', campaignId: 'campaigns', contactId: 'contacts' };
    const filters = reads.flatMap(({ template, idFilters }) => idFilters.map((name) => ({ template, name })));
    expect(filters.filter(({ name }) => !(name in filterResources))).toEqual([]);
    expect(filters.length).toBeGreaterThan(3);
    for (const { template, name } of filters) {
      const request = `${template.replace(/^\/api\/v1/, '')}?${name}=${seeds[filterResources[name]]}`;
      const response = await intruder.call('GET', request);
      expect({ request, status: [200, 404].includes(response.status) }).toEqual({ request, status: true });
      expectNoLeak(request, response);
    }
    expectNoLeak('contacts by address', await intruder.call('GET', `/contacts?address=${owner.marker}%40example.com`));

    // A segment preview of A's exact rule counts nothing in B.
    const preview = await intruder.call('POST', '/segments/preview', {
      definition: { operator: 'and', rules: [{ type: 'attribute', key: 'plan', operator: 'eq', value: owner.marker }] },
    });
    expect(preview.status).toBe(200);
    expect(JSON.stringify(preview.body)).not.toContain(owner.marker);
    expect(preview.body).toMatchObject({ count: 0 });
  });
  it("a workspace's contacts: another workspace's CSV export is its header alone, filtered by A's list, tag or segment too; A's contact export is 404", async () => {
    const owner = await workspace();
    const intruder = await workspace();
    const contactId = createdId(await owner.call('POST', '/contacts', { identities: [{ channel: 'email', address: `${owner.marker}@example.com` }], attributes: { [owner.marker]: owner.marker } }));
    const listId = createdId(await owner.call('POST', '/lists', { name: owner.marker }));
    await owner.call('POST', `/lists/${listId}/contacts`, { contactIds: [contactId] });
    const header = 'id,createdAt,email,phone,telegram,consent,tags,lists\r\n';
    for (const path of ['/contacts/export', `/contacts/export?listId=${listId}`]) {
      expect({ path, answer: await intruder.call('GET', path) }).toMatchObject({ path, answer: { status: 200, body: header } });
    }
    expect((await owner.call('GET', '/contacts/export')).body).toContain(owner.marker);
    expect(await intruder.call('GET', `/contacts/${contactId}/export`)).toMatchObject({ status: 404, body: { error: 'not_found' } });
  });

  it("a workspace's touches and conversions: another workspace's UTM reports, CSV and entity conversions show none of them", async () => {
    const owner = await workspace();
    const intruder = await workspace();
    const contactId = createdId(await owner.call('POST', '/contacts', { identities: [{ channel: 'email', address: `${owner.marker}@example.com` }] }));
    const campaignId = randomUUID();
    await api.db.query(
      `INSERT INTO utm_touches (id, workspace_id, contact_id, source, medium, campaign, url, canonical_url, occurred_at, kind, campaign_id)
       VALUES (gen_random_uuid(), $1, $2, $3, 'email', $3, 'https://shop.example/x', 'https://shop.example/x', now() - interval '1 hour', 'campaign', $4)`,
      { bind: [owner.workspaceId, contactId, owner.marker, campaignId] },
    );
    expect((await owner.call('POST', '/events', { event: owner.marker, contactId, properties: { value: 12, currency: 'EUR' } })).status).toBe(202);
    expect(bodyOf(await owner.call('GET', '/utm/summary'))).toMatchObject({ rows: [{ campaign: owner.marker, conversions: 1 }] });

    for (const path of ['/utm/touches', '/utm/summary', '/utm/summary?attribution=first', '/utm/conversions', '/utm/conversions/stats', `/utm/touches?contactId=${contactId}`, `/utm/touches?source=${owner.marker}`]) {
      const response = await intruder.call('GET', path);
      expect({ path, status: response.status, leaks: [contactId, owner.marker].filter((value) => JSON.stringify(response.body).includes(value)) }).toEqual({ path, status: 200, leaks: [] });
    }
    const csv = await intruder.call('GET', '/utm/touches?format=csv');
    expect(csv.body).toBe('id,occurredAt,contactId,messageId,source,medium,campaign,url,isContent\r\n');
    expect(await intruder.call('GET', `/contacts/${contactId}/conversions`)).toMatchObject({ status: 404, body: { error: 'not_found' } });
    // A campaign id only the owner's touches name: unknown to the intruder, so 404 rather than an empty report.
    expect(await intruder.call('GET', `/campaigns/${campaignId}/conversions`)).toMatchObject({ status: 404, body: { error: 'not_found' } });
  });
  it("a workspace's saved Twilio account and Telegram bot: another workspace's key reads configured: false, deletes nothing, and cannot take the bot", async () => {
    // An API of its own, pointed at the provider stand-ins, so this walk stays apart from the one above.
    const twilio = await startTwilioStandIn();
    const telegram = await startTelegramStandIn();
    const own = await startApi({ RATE_LIMIT_PER_SECOND: '1000', TWILIO_API_URL: twilio.url, TELEGRAM_API_URL: telegram.url, PUBLIC_BASE_URL: 'https://messaging.example' });
    try {
      const [owner, intruder] = [await createTestWorkspace(own), await createTestWorkspace(own)];
      const [a, b] = [own.as(owner.apiKey), own.as(intruder.apiKey)];
      const account = { accountSid: `AC${randomUUID().replace(/-/g, '')}`, authToken: randomUUID(), whatsappFrom: '+14155552671' };
      twilio.addAccount(account.accountSid, account.authToken);
      const bot = telegram.addBot();
      expect((await a('PUT', '/integrations/twilio', account)).status).toBe(200);
      expect((await a('PUT', '/integrations/telegram', { botToken: bot.token })).status).toBe(200);
      const readA = async () => [(await a('GET', '/integrations/twilio')).body, (await a('GET', '/integrations/telegram')).body, bot.webhook];
      const before = await readA();
      expect(before).toMatchObject([{ configured: true }, { configured: true }, { url: expect.any(String) }]);

      const walked: Array<{ route: string; status: number; body: unknown }> = [];
      for (const [method, path] of [['GET', '/integrations/twilio'], ['GET', '/integrations/telegram'], ['DELETE', '/integrations/twilio'], ['DELETE', '/integrations/telegram']]) {
        const response = await b(method, path);
        walked.push({ route: `${method} ${path}`, status: response.status, body: response.body });
      }
      expect(walked).toEqual([
        { route: 'GET /integrations/twilio', status: 200, body: { configured: false } },
        { route: 'GET /integrations/telegram', status: 200, body: { configured: false } },
        { route: 'DELETE /integrations/twilio', status: 404, body: expect.objectContaining({ error: 'not_found' }) },
        { route: 'DELETE /integrations/telegram', status: 404, body: expect.objectContaining({ error: 'not_found' }) },
      ]);
      // A bot has one update webhook, so one workspace: B saving A's token is refused before the webhook moves.
      expect(await b('PUT', '/integrations/telegram', { botToken: bot.token })).toMatchObject({ status: 409, body: { error: 'conflict' } });
      expect(await readA()).toEqual(before);
    } finally {
      await own.close();
      await Promise.all([twilio.close(), telegram.close()]);
    }
  });
});
