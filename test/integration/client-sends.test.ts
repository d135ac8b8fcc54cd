import { randomUUID } from 'node:crypto';
import type { AddressInfo } from 'node:net';
import express from 'express';
import { createMessagingClient, isMessagingApiError, MessagingApiError, paginate, unwrap, verifyWebhook, type MessagingClient, type WebhookEvent } from '../../packages/client/src';
import { domainVerificationWorkflowId } from '../../core/ids';
import { connectTemporal } from '../../temporal/connection';
import { startDnsServer, type TestDnsServer } from '../helpers/dns-server';
import { startEmailStack, type EmailStack } from '../helpers/email-stack';
import { until } from '../helpers/polling';
import { createTestWorkspace } from '../helpers/workspaces';

/**
 * The typed client (packages/client) against the whole stack as shipped: the real API on an ephemeral port,
 * the dispatcher and workers on the test Temporal server, an SMTP sink as the provider, a DNS stand-in for
 * domain checks. Every call goes through the client a user installs; only the workspace's first key comes
 * from the test helper, as it comes from `npm run admin -- workspace:create` for a user.
 */
describe('the typed client', () => {
  let stack: EmailStack;
  let dns: TestDnsServer;
  const domainIds: string[] = [];

  beforeAll(async () => {
    dns = await startDnsServer();
    stack = await startEmailStack({ overrides: { RATE_LIMIT_PER_SECOND: '1000', WEBHOOKS_ALLOW_PRIVATE_TARGETS: 'true', DNS_SERVERS: dns.address } });
  });
  afterAll(async () => {
    const temporal = await connectTemporal(stack.api.config);
    await Promise.allSettled(domainIds.map((id) => temporal.workflow.getHandle(domainVerificationWorkflowId(id)).terminate('test over')));
    await temporal.connection.close();
    await stack.close();
    await dns.close();
  });

  const clientFor = (apiKey: string, fetch?: (request: Request) => Promise<Response>) => createMessagingClient({ baseUrl: stack.api.url, apiKey, fetch });

  /** A workspace with a key (the admin CLI's part), and through the client a domain it verified. */
  async function verifiedSender(client?: MessagingClient) {
    const workspace = await createTestWorkspace(stack.api);
    const admin = client ?? clientFor(workspace.apiKey);
    const name = `c${randomUUID().slice(0, 12)}.example.com`;
    const domain = await unwrap(admin.POST('/api/v1/domains', { body: { name } }));
    domainIds.push(domain.id);
    for (const record of domain.dnsRecords) if (record.type === 'TXT') dns.setTxt(record.name, record.value);
    const verified = await unwrap(admin.POST('/api/v1/domains/{id}/verify', { params: { path: { id: domain.id } } }));
    expect(verified.status).toBe('verified');
    return { ...workspace, client: admin, from: `Acme <hello@${name}>` };
  }

  const mailsTo = (address: string) => stack.sink.received.filter((mail) => mail.recipients.includes(address));

  it("a new user's first send: a scoped key, a verified domain, an email sent with a generated key and read until sent", async () => {
    const workspace = await createTestWorkspace(stack.api);
    const admin = clientFor(workspace.apiKey);
    const key = await unwrap(admin.POST('/api/v1/api-keys', { body: { name: 'backend', scopes: ['email:send', 'domains:write'] } }));
    expect(key.apiKey).toMatch(/^sk_/);
    const { client, from } = await verifiedSender(clientFor(key.apiKey));

    const to = `first-${randomUUID()}@example.org`;
    const sent = await unwrap(client.POST('/api/v1/emails', { body: { from, to, subject: 'Welcome', html: '<p>Hello from the client</p>' } }));
    expect(sent).toMatchObject({ id: expect.any(String), status: 'queued', idempotencyKey: expect.stringMatching(/^[0-9a-f-]{36}$/) });

    const status = await until('the email is sent', () => unwrap(client.GET('/api/v1/emails/{id}', { params: { path: { id: sent.id } } })), (email) => email.status === 'sent');
    expect(status).toMatchObject({ id: sent.id, channel: 'email', toAddresses: [to], subject: 'Welcome', idempotencyKey: sent.idempotencyKey });
    expect(mailsTo(to)).toHaveLength(1);
  });

  it('a send whose response is lost is retried with its generated key: the service answers duplicate with the first id and one email leaves', async () => {
    const { apiKey, from } = await verifiedSender();
    const bodies: string[] = [];
    let dropped = 0;
    // The request reaches the service and is accepted; the answer never reaches the caller (a reset connection).
    const client = clientFor(apiKey, async (request) => {
      if (request.method === 'POST') bodies.push(await request.clone().text());
      const response = await fetch(request);
      if (request.method === 'POST' && dropped++ === 0) throw new TypeError('fetch failed', { cause: new Error('read ECONNRESET') });
      return response;
    });
    const to = `lost-${randomUUID()}@example.org`;
    const sent = await unwrap(client.POST('/api/v1/emails', { body: { from, to, subject: 'Once', text: 'Only once' } }));
    expect(bodies).toHaveLength(2);
    expect(JSON.parse(bodies[1]!)).toEqual(JSON.parse(bodies[0]!));
    expect(sent).toMatchObject({ status: 'duplicate', idempotencyKey: (JSON.parse(bodies[0]!) as { idempotencyKey: string }).idempotencyKey });
    await until('the email is sent', () => unwrap(client.GET('/api/v1/emails/{id}', { params: { path: { id: sent.id } } })), (email) => email.status === 'sent');
    expect(mailsTo(to)).toHaveLength(1);
  });

  it('a batch: each item keyed and answered by index, a bad item failing alone; a lost response retried yields duplicates, not second sends', async () => {
    const { apiKey, from } = await verifiedSender();
    let dropped = false;
    const client = clientFor(apiKey, async (request) => {
      const response = await fetch(request);
      if (request.method === 'POST' && !dropped) {
        dropped = true;
        throw new TypeError('fetch failed', { cause: new Error('socket hang up') });
      }
      return response;
    });
    const [ann, bob] = [`ann-${randomUUID()}@example.org`, `bob-${randomUUID()}@example.org`];
    const batch = await unwrap(
      client.POST('/api/v1/emails/batch', {
        body: {
          emails: [
            { from, to: ann, subject: 'Batch', html: '<p>1</p>' },
            { from: 'hi@unverified.example.net', to: bob, subject: 'Batch', html: '<p>2</p>' },
            { from, to: bob, subject: 'Batch', html: '<p>3</p>', idempotencyKey: `batch-${randomUUID()}` },
          ],
        },
      }),
    );
    expect(batch).toMatchObject({ accepted: 2, failed: 1 });
    expect(batch.results).toEqual([
      expect.objectContaining({ index: 0, status: 'accepted', duplicate: true }),
      expect.objectContaining({ index: 1, status: 'failed', error: expect.objectContaining({ code: 'domain_not_verified' }) }),
      expect.objectContaining({ index: 2, status: 'accepted', duplicate: true }),
    ]);
    await until('both are sent', async () => mailsTo(ann).length + mailsTo(bob).length, (count) => count >= 2);
    await new Promise((resolve) => setTimeout(resolve, 500));
    expect([mailsTo(ann).length, mailsTo(bob).length]).toEqual([1, 1]);
  });

  it('refusals come back as MessagingApiError with the code: 422 validation_error by field, 404 not_found, 403 domain_not_verified, 422 confirmation_required', async () => {
    const { client, from } = await verifiedSender();
    const invalid = await unwrap(client.POST('/api/v1/emails', { body: { from, to: 'not an address', subject: 'x', html: 'x' } })).catch((err: unknown) => err);
    expect(invalid).toBeInstanceOf(MessagingApiError);
    expect(invalid).toMatchObject({ status: 422, code: 'validation_error', requestId: expect.any(String) });
    expect((invalid as MessagingApiError).fieldErrors.to).toEqual(expect.arrayContaining([expect.any(String)]));

    const missing = await unwrap(client.GET('/api/v1/emails/{id}', { params: { path: { id: randomUUID() } } })).catch((err: unknown) => err);
    expect(isMessagingApiError(missing) && missing.code === 'not_found' && missing.status === 404).toBe(true);

    await expect(unwrap(client.POST('/api/v1/emails', { body: { from: 'hi@elsewhere.example.net', to: 'ann@example.org', subject: 'x', html: 'x' } }))).rejects.toMatchObject({
      status: 403, code: 'domain_not_verified', message: expect.any(String),
    });
    const list = await unwrap(client.POST('/api/v1/lists', { body: { name: `unconfirmed-${randomUUID()}` } }));
    const campaign = await unwrap(client.POST('/api/v1/campaigns', { body: { name: 'Unconfirmed', listId: list.id, fromAddress: from, subject: 's', html: 'h' } }));
    await expect(unwrap(client.POST('/api/v1/campaigns/{id}/send', { params: { path: { id: campaign.id } }, body: {} }))).rejects.toMatchObject({ status: 422, code: 'confirmation_required' });
  });

  it('paginate walks a cursor list (orders), an offset list (emails) and a page list (contacts) page by page, each item once', async () => {
    const { apiKey, from } = await verifiedSender();
    const pages: string[] = [];
    const client = clientFor(apiKey, (request) => {
      if (request.method === 'GET') pages.push(new URL(request.url).search);
      return fetch(request);
    });
    const externalIds = Array.from({ length: 5 }, (_, i) => `order-${i}-${randomUUID()}`);
    for (const [i, externalId] of externalIds.entries()) {
      await unwrap(client.POST('/api/v1/commerce/orders', { body: { externalId, email: `buyer${i}@example.org`, total: 10 + i, currency: 'EUR', placedAt: new Date(Date.UTC(2026, 0, 1 + i)).toISOString() } }));
    }
    const orders: string[] = [];
    for await (const order of paginate(client, '/api/v1/commerce/orders', { query: { limit: 2 } })) orders.push(order.externalId);
    expect(orders).toEqual([...externalIds].reverse());
    expect(pages.filter((query) => query.includes('limit=2'))).toHaveLength(3);

    for (let i = 0; i < 3; i++) await unwrap(client.POST('/api/v1/emails', { body: { from, to: `page${i}@example.org`, subject: `Page ${i}`, text: 'x' } }));
    const subjects: Array<string | null> = [];
    for await (const email of paginate(client, '/api/v1/emails', { query: { limit: 2 } })) subjects.push(email.subject);
    expect(subjects).toEqual(['Page 2', 'Page 1', 'Page 0']);

    for (let i = 0; i < 5; i++) await unwrap(client.POST('/api/v1/contacts', { body: { identities: [{ channel: 'email', address: `member${i}@example.org` }] } }));
    const walked: string[] = [];
    for await (const contact of paginate(client, '/api/v1/contacts', { query: { pageSize: 2 } })) walked.push(contact.id);
    const all = await unwrap(client.GET('/api/v1/contacts', { params: { query: { pageSize: 200 } } }));
    expect(all.total).toBeGreaterThanOrEqual(5);
    expect(walked).toHaveLength(all.total);
    expect(new Set(walked)).toEqual(new Set(all.data.map((contact) => contact.id)));
  });

  it('a campaign: estimated, then sent with the estimate\'s confirmation token to every list member', async () => {
    const { client, from } = await verifiedSender();
    const list = await unwrap(client.POST('/api/v1/lists', { body: { name: `launch-${randomUUID()}` } }));
    const addresses = [`c1-${randomUUID()}@example.org`, `c2-${randomUUID()}@example.org`];
    const contactIds: string[] = [];
    for (const address of addresses) {
      contactIds.push((await unwrap(client.POST('/api/v1/contacts', { body: { identities: [{ channel: 'email', address, consent: 'opted_in' }] } }))).id);
    }
    await unwrap(client.POST('/api/v1/lists/{id}/contacts', { params: { path: { id: list.id } }, body: { contactIds } }));
    const campaign = await unwrap(client.POST('/api/v1/campaigns', { body: { name: 'Launch', listId: list.id, fromAddress: from, subject: 'We launched', html: '<p>Hello</p>' } }));

    const { estimate, confirmationToken } = await unwrap(client.POST('/api/v1/campaigns/{id}/estimate', { params: { path: { id: campaign.id } } }));
    expect(estimate).toMatchObject({ listMembers: 2, recipients: 2, excluded: 0 });
    const sent = await unwrap(client.POST('/api/v1/campaigns/{id}/send', { params: { path: { id: campaign.id } }, body: { confirmationToken } }));
    expect(sent).toMatchObject({ id: campaign.id, status: 'sending', recipients: 2 });
    await until('the campaign is sent', () => unwrap(client.GET('/api/v1/campaigns/{id}', { params: { path: { id: campaign.id } } })), (read) => read.status === 'sent', 60_000);
    for (const address of addresses) expect(mailsTo(address)).toHaveLength(1);
  });

  it('a webhook the service delivers is verified by verifyWebhook in an Express handler; a tampered copy is refused', async () => {
    const received: Array<{ event: WebhookEvent; id: string }> = [];
    const raw: Array<{ body: string; headers: Record<string, string> }> = [];
    // The handler of the client's README, as a user writes it.
    const app = express();
    let secret = '';
    app.post('/hooks/messaging', express.raw({ type: 'application/json' }), (req, res) => {
      raw.push({ body: (req.body as Buffer).toString('utf8'), headers: req.headers as Record<string, string> });
      try {
        const event = verifyWebhook({ secret, payload: req.body as Buffer, headers: req.headers });
        received.push({ event, id: String(req.headers['webhook-id']) });
        res.sendStatus(204);
      } catch {
        res.sendStatus(400);
      }
    });
    const server = app.listen(0, '127.0.0.1');
    await new Promise((resolve) => server.once('listening', resolve));
    try {
      const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/hooks/messaging`;
      const { client, from } = await verifiedSender();
      const created = await unwrap(client.POST('/api/v1/webhooks', { body: { url, events: ['email.sent'] } }));
      secret = created.secret;
      expect(secret).toMatch(/^whsec_/);

      const sent = await unwrap(client.POST('/api/v1/emails', { body: { from, to: `hook-${randomUUID()}@example.org`, subject: 'Hooked', html: '<p>x</p>' } }));
      const [delivery] = await until('the webhook arrives', async () => received, (events) => events.length > 0);
      expect(delivery!.event).toMatchObject({ type: 'email.sent', data: { emailId: sent.id, channel: 'email', subject: 'Hooked' } });
      const deliveries = await until('the delivery is logged as succeeded', () => unwrap(client.GET('/api/v1/webhooks/{id}/deliveries', { params: { path: { id: created.webhook.id } } })), (list) => list.deliveries[0]?.status === 'succeeded');
      expect(deliveries.deliveries[0]).toMatchObject({ id: delivery!.id, statusCode: 204 });

      const original = raw[0]!;
      const signed = Object.fromEntries(Object.entries(original.headers).filter(([name]) => name.startsWith('webhook-') || name === 'content-type'));
      const tampered = await fetch(url, { method: 'POST', headers: signed, body: original.body.replace('Hooked', 'Hacked') });
      expect(tampered.status).toBe(400);
      expect(() => verifyWebhook({ secret, payload: original.body.replace('Hooked', 'Hacked'), headers: original.headers })).toThrow();
      expect(received).toHaveLength(1);
    } finally {
      server.closeAllConnections();
      await new Promise((resolve) => server.close(resolve));
    }
  });
});
