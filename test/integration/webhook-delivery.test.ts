import { randomUUID } from 'node:crypto';
import { QueryTypes } from 'sequelize';
import { Webhook } from 'standardwebhooks';
import { domainVerificationWorkflowId, webhookDeliveryWorkflowId } from '../../core/ids';
import { startDnsServer, type TestDnsServer } from '../helpers/dns-server';
import { startEmailStack, type EmailStack } from '../helpers/email-stack';
import { addTestDomain, createTestWorkspace } from '../helpers/workspaces';
import { until } from '../helpers/polling';
import { type Answer, type ReceivedRequest, startWebhookReceiver, type WebhookReceiver } from '../helpers/webhook-receiver';
import { connectTemporal } from '../../temporal/connection';

interface Delivery {
  id: string;
  event: string;
  status: string;
  statusCode: number | null;
  error: string | null;
  attempts: Array<{ attempt: number; status: string; statusCode: number | null; durationMs: number | null }>;
}

const PER_ENDPOINT = 3;
const SWEEP_INTERVAL_MS = 500;

/**
 * Webhooks through the whole stack as shipped: events stored by the real send path and domain checks,
 * fanned out by the database, started by the webhook dispatcher, delivered by the control worker to a
 * local receiver (WEBHOOKS_ALLOW_PRIVATE_TARGETS=true), and verified with the official library.
 */
describe('webhook delivery', () => {
  let stack: EmailStack;
  let dns: TestDnsServer;
  let receiver: WebhookReceiver;
  const answers = new Map<string, Answer>();
  const domainIds: string[] = [];

  beforeAll(async () => {
    dns = await startDnsServer();
    receiver = await startWebhookReceiver((path) => answers.get(path) ?? 200);
    stack = await startEmailStack({
      overrides: {
        RATE_LIMIT_PER_SECOND: '1000',
        WEBHOOKS_ALLOW_PRIVATE_TARGETS: 'true',
        WEBHOOK_IN_FLIGHT_PER_ENDPOINT: String(PER_ENDPOINT),
        WEBHOOK_SLOT_SWEEP_INTERVAL_MS: String(SWEEP_INTERVAL_MS),
        DNS_SERVERS: dns.address,
      },
    });
  });
  afterAll(async () => {
    const client = await connectTemporal(stack.api.config);
    await Promise.allSettled(domainIds.map((id) => client.workflow.getHandle(domainVerificationWorkflowId(id)).terminate('test over')));
    await client.connection.close();
    await stack.close();
    await receiver.close();
    await dns.close();
  });

  /** A workspace with a webhook at a path of its own; answers its key, the webhook id and secret, and the path. */
  async function subscriber(events: string[]) {
    const workspace = await createTestWorkspace(stack.api);
    const { call } = workspace;
    const path = `/${randomUUID()}`;
    const created = await call('POST', '/webhooks', { url: `${receiver.url}${path}`, events });
    expect(created.status).toBe(201);
    const { webhook, secret } = created.body as { webhook: { id: string }; secret: string };
    return { ...workspace, call, path, webhookId: webhook.id, secret };
  }

  async function deliveries(call: ReturnType<EmailStack['api']['as']>, webhookId: string): Promise<Delivery[]> {
    return ((await call('GET', `/webhooks/${webhookId}/deliveries`)).body as { deliveries: Delivery[] }).deliveries;
  }

  async function settled(call: ReturnType<EmailStack['api']['as']>, webhookId: string, status: string): Promise<Delivery> {
    for (const deadline = Date.now() + 20_000; Date.now() < deadline; await new Promise((resolve) => setTimeout(resolve, 100))) {
      const [latest] = await deliveries(call, webhookId);
      if (latest?.status === status) return latest;
    }
    throw new Error(`no ${status} delivery: ${JSON.stringify(await deliveries(call, webhookId))}`);
  }

  const verify = (secret: string, request: ReceivedRequest) => new Webhook(secret).verify(request.body, request.headers) as { type: string; data: Record<string, unknown> };

  async function storeDomainEvent(workspaceId: string, type = 'domain.verified') {
    await stack.api.db.query('INSERT INTO platform_events (id, workspace_id, type, data) VALUES ($1, $2, $3, $4)', {
      bind: [randomUUID(), workspaceId, type, JSON.stringify({ id: randomUUID(), name: 'mail.example.com' })],
    });
  }

  it('a sent email reaches the receiver as a signed email.sent that the official library verifies, logged as one successful attempt', async () => {
    const { apiKey, workspaceId, call, path, webhookId, secret } = await subscriber(['email.sent']);
    const domain = (await addTestDomain(stack, workspaceId)).domain;
    const sent = await stack.api.call('POST', '/api/v1/emails', {
      key: apiKey,
      body: { from: `Acme <hello@${domain}>`, to: 'ann@example.org', subject: 'Hi', html: '<p>Hi</p>', idempotencyKey: `wh-${randomUUID()}` },
    });
    const { id } = sent.body as { id: string };
    const [request] = await receiver.waitFor(path);
    expect(request.contentType).toBe('application/json');
    expect(verify(secret, request)).toEqual({
      type: 'email.sent',
      createdAt: expect.any(String),
      data: expect.objectContaining({ emailId: id, kind: 'transactional', from: `Acme <hello@${domain}>`, to: ['ann@example.org'], subject: 'Hi' }),
    });
    const delivery = await settled(call, webhookId, 'succeeded');
    expect(delivery).toMatchObject({ id: request.headers['webhook-id'], event: 'email.sent', statusCode: 200, error: null });
    expect(delivery.attempts).toEqual([expect.objectContaining({ attempt: 1, status: 'succeeded', statusCode: 200, durationMs: expect.any(Number) })]);
    expect(receiver.to(path)).toHaveLength(1);
  });

  it('a domain whose records check becomes a domain.verified delivery', async () => {
    const { apiKey, path, secret } = await subscriber(['domain.verified']);
    const name = `d${randomUUID().slice(0, 12)}.example.com`;
    const created = await stack.api.call('POST', '/api/v1/domains', { key: apiKey, body: { name } });
    const domain = created.body as { id: string; dnsRecords: Array<{ type: string; name: string; value: string }> };
    domainIds.push(domain.id);
    for (const record of domain.dnsRecords) if (record.type === 'TXT') dns.setTxt(record.name, record.value);
    expect((await stack.api.call('POST', `/api/v1/domains/${domain.id}/verify`, { key: apiKey })).body).toMatchObject({ status: 'verified' });
    const [request] = await receiver.waitFor(path);
    expect(verify(secret, request)).toMatchObject({ type: 'domain.verified', data: { id: domain.id, name, status: 'verified' } });
  });

  it('an endpoint that never answers holds only its own few slots: another workspace\'s delivery arrives at once', async () => {
    const slow = await subscriber(['domain.failed']);
    answers.set(slow.path, 'hang');
    // A burst of 300 events in one statement, for one endpoint that never answers.
    await stack.api.db.query(
      `INSERT INTO platform_events (id, workspace_id, type, data) SELECT gen_random_uuid(), $1, 'domain.failed', '{}' FROM generate_series(1, 300)`,
      { bind: [slow.workspaceId] },
    );
    await receiver.waitFor(slow.path, PER_ENDPOINT);

    const fast = await subscriber(['domain.verified']);
    const before = Date.now();
    await storeDomainEvent(fast.workspaceId);
    await receiver.waitFor(fast.path);
    expect(Date.now() - before).toBeLessThan(5_000);

    // The slow endpoint's backlog waits in Postgres; Temporal holds only its bound.
    const [counts] = await stack.api.db.query<{ in_flight: string; waiting: string }>(
      `SELECT count(*) FILTER (WHERE dispatch_lease_until > now()) AS in_flight, count(*) FILTER (WHERE dispatch_lease_until IS NULL) AS waiting
       FROM webhook_deliveries WHERE webhook_id = $1 AND status = 'pending'`,
      { bind: [slow.webhookId], type: QueryTypes.SELECT },
    );
    expect(Number(counts.in_flight)).toBe(PER_ENDPOINT);
    expect(Number(counts.waiting)).toBe(300 - PER_ENDPOINT);
    expect(receiver.to(slow.path)).toHaveLength(PER_ENDPOINT);
    // Deleting the endpoint ends its deliveries: its next attempts find nothing to send.
    expect((await slow.call('DELETE', `/webhooks/${slow.webhookId}`)).status).toBe(200);
  });

  it('a 410 disables the endpoint; once it is enabled again, a retry sends the same delivery again and it succeeds', async () => {
    const { workspaceId, call, path, webhookId, secret } = await subscriber(['domain.verified']);
    answers.set(path, 410);
    await storeDomainEvent(workspaceId);
    const failed = await settled(call, webhookId, 'failed');
    expect(failed).toMatchObject({ statusCode: 410, error: expect.stringMatching(/410/) });
    expect((await call('GET', `/webhooks/${webhookId}`)).body).toMatchObject({ webhook: { enabled: false } });
    expect(await call('POST', `/webhooks/${webhookId}/deliveries/${failed.id}/retry`)).toMatchObject({ status: 409, body: { error: 'conflict' } });

    answers.set(path, 204);
    expect((await call('PATCH', `/webhooks/${webhookId}`, { enabled: true })).body).toMatchObject({ webhook: { enabled: true } });
    const retried = await call('POST', `/webhooks/${webhookId}/deliveries/${failed.id}/retry`);
    expect(retried).toMatchObject({ status: 202, body: { delivery: { id: failed.id, status: 'pending' } } });
    const succeeded = await settled(call, webhookId, 'succeeded');
    expect(succeeded.attempts.map((attempt) => [attempt.attempt, attempt.status, attempt.statusCode])).toEqual([[1, 'failed', 410], [2, 'succeeded', 204]]);
    const requests = receiver.to(path);
    expect(requests.map((request) => request.headers['webhook-id'])).toEqual([failed.id, failed.id]);
    expect(requests[1].body).toBe(requests[0].body);
    expect(verify(secret, requests[1])).toMatchObject({ type: 'domain.verified' });
  });

  it('a retry of a delivery still being attempted is refused', async () => {
    const { workspaceId, call, path, webhookId } = await subscriber(['domain.verified']);
    answers.set(path, 500);
    await storeDomainEvent(workspaceId);
    await receiver.waitFor(path);
    const [pending] = await deliveries(call, webhookId);
    expect(pending.status).toBe('pending');
    expect(await call('POST', `/webhooks/${webhookId}/deliveries/${pending.id}/retry`)).toMatchObject({ status: 409, body: { error: 'conflict' } });
    await call('DELETE', `/webhooks/${webhookId}`);
  });

  it('after a rotation requests carry both signatures, each secret verifies them; once the overlap ends only the new one does', async () => {
    const { workspaceId, call, path, webhookId, secret: old } = await subscriber(['domain.verified']);
    const { secret: current } = (await call('POST', `/webhooks/${webhookId}/rotate-secret`)).body as { secret: string };
    await storeDomainEvent(workspaceId);
    const [during] = await receiver.waitFor(path);
    expect(during.headers['webhook-signature'].split(' ')).toHaveLength(2);
    expect(verify(current, during)).toMatchObject({ type: 'domain.verified' });
    expect(verify(old, during)).toMatchObject({ type: 'domain.verified' });

    await stack.api.db.query("UPDATE webhooks SET previous_secret_expires_at = now() - interval '1 second' WHERE id = $1", { bind: [webhookId] });
    await storeDomainEvent(workspaceId);
    const [, after] = await receiver.waitFor(path, 2);
    expect(after.headers['webhook-signature'].split(' ')).toHaveLength(1);
    expect(verify(current, after)).toMatchObject({ type: 'domain.verified' });
    expect(() => verify(old, after)).toThrow();
  });

  it('an endpoint whose deliveries have all failed for 5 days is disabled by its next failure', async () => {
    const { workspaceId, call, path, webhookId } = await subscriber(['domain.verified']);
    answers.set(path, 500);
    await stack.api.db.query("UPDATE webhooks SET failing_since = now() - interval '5 days 1 minute' WHERE id = $1", { bind: [webhookId] });
    // Saying "enabled" of an endpoint that is enabled does not wipe its record; only enabling a disabled one does.
    expect((await call('PATCH', `/webhooks/${webhookId}`, { enabled: true })).status).toBe(200);
    await storeDomainEvent(workspaceId);
    const failed = await settled(call, webhookId, 'failed');
    expect(failed).toMatchObject({ statusCode: 500, error: expect.stringMatching(/failed for 5 days/) });
    expect(failed.attempts).toHaveLength(1);
    expect((await call('GET', `/webhooks/${webhookId}`)).body).toMatchObject({ webhook: { enabled: false } });
  });

  it('deliveries whose workflows were terminated mid-flight free their endpoint slots at the next sweep: the endpoint\'s next delivery arrives', async () => {
    const { workspaceId, path, webhookId } = await subscriber(['domain.verified']);
    answers.set(path, 500);
    for (let index = 0; index < PER_ENDPOINT; index += 1) await storeDomainEvent(workspaceId);
    await receiver.waitFor(path, PER_ENDPOINT);
    const inFlight = () =>
      stack.api.db.query<{ id: string; run: number; held: boolean }>(
        "SELECT id, run, dispatch_lease_until > now() + interval '1 hour' AS held FROM webhook_deliveries WHERE webhook_id = $1 AND dispatched_at IS NOT NULL",
        { bind: [webhookId], type: QueryTypes.SELECT },
      );
    const held = await until('every slot dispatched', inFlight, (rows) => rows.length === PER_ENDPOINT);
    // Old enough for the sweep to ask about (it leaves slots younger than a minute alone).
    const age = () => stack.api.db.query("UPDATE webhook_deliveries SET dispatched_at = now() - interval '2 minutes', slot_checked_at = NULL WHERE webhook_id = $1", { bind: [webhookId] });
    await age();
    // Workflows still running (each waits 5 s before its second attempt) keep their slots through several sweeps.
    await new Promise((resolve) => setTimeout(resolve, 3 * SWEEP_INTERVAL_MS));
    expect((await inFlight()).every((row) => row.held)).toBe(true);

    const client = await connectTemporal(stack.api.config);
    try {
      await Promise.all(held.map((row) => client.workflow.getHandle(webhookDeliveryWorkflowId(row.id, row.run)).terminate('operator terminated it')));
    } finally {
      await client.connection.close();
    }
    await age();
    answers.set(path, 200);
    const before = Date.now();
    await storeDomainEvent(workspaceId);
    const [next] = await stack.api.db.query<{ id: string }>('SELECT id FROM webhook_deliveries WHERE webhook_id = $1 AND NOT id = ANY ($2::uuid[])', {
      bind: [webhookId, held.map((row) => row.id)],
      type: QueryTypes.SELECT,
    });
    await until('the endpoint\'s next delivery', async () => receiver.to(path).map((request) => request.headers['webhook-id']), (ids) => ids.includes(next.id), 20_000);
    expect(Date.now() - before).toBeLessThan(10_000);
    // The terminated deliveries are not lost: each goes again as a new run and succeeds.
    const settledRows = await until(
      'the terminated deliveries delivered as new runs',
      () => stack.api.db.query<{ id: string; run: number; status: string }>('SELECT id, run, status FROM webhook_deliveries WHERE id = ANY ($1::uuid[])', { bind: [held.map((row) => row.id)], type: QueryTypes.SELECT }),
      (rows) => rows.every((row) => row.status === 'succeeded'),
      20_000,
    );
    expect(settledRows.map((row) => row.run)).toEqual([2, 2, 2]);
  });
});
