import { QueryTypes } from 'sequelize';
import { createWebhookActivities } from '../../activities/webhooks';
import { configKeyring } from '../../core/config';
import { openSecret } from '../../core/secrets';
import { insertPlatformEvent } from '../../db/repositories/platform-events';
import { type ApiHarness, startApi } from '../helpers/api-harness';
import { createTestKey, createTestWorkspace } from '../helpers/workspaces';
import { guardSockets, standInResolver } from '../helpers/ssrf-stand-in';

interface WebhookBody {
  id: string;
  url: string;
  description: string | null;
  events: string[];
  enabled: boolean;
  createdAt: string;
}

/** Names the URL check and the calls resolve through a stand-in: nothing here reaches a real resolver or host. */
const records: Record<string, string[]> = {
  'hooks.example.com': ['93.184.216.34'],
  'internal.example.com': ['10.1.2.3'],
  'mixed.example.com': ['93.184.216.34', '192.168.1.10'],
  'metadata.example.com': ['169.254.169.254'],
};
const resolveHost = standInResolver(records);

describe('webhooks API', () => {
  let api: ApiHarness;
  beforeAll(async () => {
    api = await startApi({ RATE_LIMIT_PER_SECOND: '1000' }, { webhookFetch: { resolveHost } });
  });
  afterAll(() => api.close());

  async function workspace() {
    const created = await createTestWorkspace(api);
    return created;
  }

  const valid = { url: 'https://hooks.example.com/in', events: ['email.sent', 'email.delivered'], description: 'CRM sync' };

  it('create answers the secret once (whsec_, 24+ bytes, stored only sealed); reads never show it again', async () => {
    const { call, workspaceId } = await workspace();
    const created = await call('POST', '/webhooks', valid);
    expect(created.status).toBe(201);
    const { webhook, secret } = created.body as { webhook: WebhookBody; secret: string };
    expect(webhook).toEqual({ id: expect.any(String), url: valid.url, description: 'CRM sync', events: valid.events, enabled: true, createdAt: expect.any(String) });
    expect(secret).toMatch(/^whsec_[A-Za-z0-9+/]+=*$/);
    expect(Buffer.from(secret.slice(6), 'base64').length).toBeGreaterThanOrEqual(24);

    for (const path of ['/webhooks', `/webhooks/${webhook.id}`]) {
      const read = await call('GET', path);
      expect(read.status).toBe(200);
      expect(JSON.stringify(read.body)).not.toContain(secret.slice(6));
    }
    expect((await call('GET', '/webhooks')).body).toEqual({ webhooks: [webhook] });
    const [row] = await api.db.query<{ secret_sealed: string }>('SELECT secret_sealed FROM webhooks WHERE workspace_id = $1', {
      bind: [workspaceId],
      type: QueryTypes.SELECT,
    });
    expect(row.secret_sealed).not.toContain(secret.slice(6));
    expect(openSecret(configKeyring(api.config), { workspaceId, column: 'webhooks.secret', row: webhook.id }, row.secret_sealed)).toBe(secret);
  });

  it('PATCH changes what it names, DELETE answers the webhook and then it is gone; another workspace sees 404', async () => {
    const { call } = await workspace();
    const { webhook } = (await call('POST', '/webhooks', valid)).body as { webhook: WebhookBody };
    const patched = await call('PATCH', `/webhooks/${webhook.id}`, { events: ['*'], enabled: false, description: null });
    expect(patched).toMatchObject({ status: 200, body: { webhook: { ...webhook, events: ['*'], enabled: false, description: null } } });
    expect((await call('PATCH', `/webhooks/${webhook.id}`, { url: 'https://hooks.example.com/v2' })).body).toMatchObject({
      webhook: { url: 'https://hooks.example.com/v2', events: ['*'], enabled: false },
    });

    const other = await workspace();
    expect((await other.call('GET', `/webhooks/${webhook.id}`)).status).toBe(404);
    expect((await other.call('PATCH', `/webhooks/${webhook.id}`, { enabled: true })).status).toBe(404);
    expect((await other.call('DELETE', `/webhooks/${webhook.id}`)).status).toBe(404);
    expect((await other.call('GET', `/webhooks/${webhook.id}/deliveries`)).status).toBe(404);
    expect((await other.call('POST', `/webhooks/${webhook.id}/rotate-secret`)).status).toBe(404);

    expect(await call('DELETE', `/webhooks/${webhook.id}`)).toMatchObject({ status: 200, body: { webhook: { id: webhook.id } } });
    expect((await call('GET', `/webhooks/${webhook.id}`)).status).toBe(404);
    expect((await call('GET', '/webhooks/not-a-uuid')).status).toBe(404);
  });

  it('invalid events and bodies answer 422 in the spec\'s shape', async () => {
    const { call } = await workspace();
    const cases: Array<[unknown, string]> = [
      [{ ...valid, events: ['email.nope'] }, 'events'],
      [{ ...valid, events: [] }, 'events'],
      [{ ...valid, events: ['*', 'email.sent'] }, 'events'],
      [{ ...valid, events: undefined }, 'events'],
      [{ ...valid, url: undefined }, 'url'],
      [{ ...valid, description: 'x'.repeat(501) }, 'description'],
    ];
    for (const [body, field] of cases) {
      const response = await call('POST', '/webhooks', body);
      expect({ body, status: response.status }).toEqual({ body, status: 422 });
      expect(response.body).toEqual({ error: { formErrors: [], fieldErrors: { [field]: [expect.any(String)] } } });
    }
    expect((await call('POST', '/webhooks', { ...valid, events: ['email.sent', 'email.sent'] })).body).toMatchObject({ webhook: { events: ['email.sent'] } });
  });

  it('a URL that is not https or reaches a private, loopback, link-local or metadata address is refused, at create and update', async () => {
    const { call } = await workspace();
    const refused = [
      'http://hooks.example.com/in',
      'ftp://hooks.example.com/in',
      'not a url',
      'https://10.0.0.1/in',
      'https://127.0.0.1/in',
      'https://localhost/in',
      'https://[::1]/in',
      'https://169.254.169.254/latest/meta-data',
      'https://internal.example.com/in',
      'https://mixed.example.com/in',
      'https://metadata.example.com/in',
      'https://unknown.example.com/in',
      'https://user:pass@hooks.example.com/in',
    ];
    for (const url of refused) {
      const response = await call('POST', '/webhooks', { ...valid, url });
      expect({ url, status: response.status }).toEqual({ url, status: 422 });
      expect(response.body).toEqual({ error: { formErrors: [], fieldErrors: { url: [expect.stringMatching(/^must be https and resolve to public addresses only: /)] } } });
    }
    const { webhook } = (await call('POST', '/webhooks', valid)).body as { webhook: WebhookBody };
    expect((await call('PATCH', `/webhooks/${webhook.id}`, { url: 'https://internal.example.com/in' })).status).toBe(422);
    expect((await call('GET', `/webhooks/${webhook.id}`)).body).toMatchObject({ webhook: { url: valid.url } });
  });

  it('rotate-secret answers a new secret once; the previous one keeps signing for 24 hours', async () => {
    const { call, workspaceId } = await workspace();
    const { webhook, secret } = (await call('POST', '/webhooks', valid)).body as { webhook: WebhookBody; secret: string };
    const rotated = await call('POST', `/webhooks/${webhook.id}/rotate-secret`);
    expect(rotated).toMatchObject({ status: 200, body: { webhook: { id: webhook.id }, secret: expect.stringMatching(/^whsec_/) } });
    const next = (rotated.body as { secret: string }).secret;
    expect(next).not.toBe(secret);
    const [row] = await api.db.query<{ secret_sealed: string; previous_secret_sealed: string; hours: number }>(
      `SELECT secret_sealed, previous_secret_sealed, extract(epoch FROM previous_secret_expires_at - now()) / 3600 AS hours
       FROM webhooks WHERE workspace_id = $1`,
      { bind: [workspaceId], type: QueryTypes.SELECT },
    );
    const open = (sealed: string) => openSecret(configKeyring(api.config), { workspaceId, column: 'webhooks.secret', row: webhook.id }, sealed);
    expect([open(row.secret_sealed), open(row.previous_secret_sealed)]).toEqual([next, secret]);
    expect(Number(row.hours)).toBeCloseTo(24, 1);
  });

  it('the deliveries list is empty at first; retrying an unknown delivery is 404', async () => {
    const { call } = await workspace();
    const { webhook } = (await call('POST', '/webhooks', valid)).body as { webhook: WebhookBody };
    expect((await call('GET', `/webhooks/${webhook.id}/deliveries`)).body).toEqual({ deliveries: [], total: 0, limit: 50, offset: 0 });
    expect((await call('GET', `/webhooks/${webhook.id}/deliveries?limit=101`)).status).toBe(422);
    expect((await call('POST', `/webhooks/${webhook.id}/deliveries/00000000-0000-4000-8000-000000000000/retry`)).status).toBe(404);
  });

  it('a workspace has at most 20 webhooks', async () => {
    const { call } = await workspace();
    for (let i = 0; i < 20; i += 1) expect((await call('POST', '/webhooks', valid)).status).toBe(201);
    expect(await call('POST', '/webhooks', valid)).toMatchObject({ status: 409, body: { error: 'conflict' } });
  });

  it('GET needs webhooks:read; POST, PATCH, DELETE, rotation and retries need webhooks:write', async () => {
    const { workspaceId, call } = await workspace();
    const { webhook } = (await call('POST', '/webhooks', valid)).body as { webhook: WebhookBody };
    const reader = api.as((await createTestKey(api, workspaceId, ['webhooks:read'])).apiKey);
    expect((await reader('GET', '/webhooks')).status).toBe(200);
    expect((await reader('GET', `/webhooks/${webhook.id}`)).status).toBe(200);
    expect((await reader('GET', `/webhooks/${webhook.id}/deliveries`)).status).toBe(200);
    const forbidden = { status: 403, body: { error: 'forbidden', need: 'webhooks:write' } };
    expect(await reader('POST', '/webhooks', valid)).toMatchObject(forbidden);
    expect(await reader('PATCH', `/webhooks/${webhook.id}`, { enabled: false })).toMatchObject(forbidden);
    expect(await reader('DELETE', `/webhooks/${webhook.id}`)).toMatchObject(forbidden);
    expect(await reader('POST', `/webhooks/${webhook.id}/rotate-secret`)).toMatchObject(forbidden);
    const other = api.as((await createTestKey(api, workspaceId, ['email:send'])).apiKey);
    expect(await other('GET', '/webhooks')).toMatchObject({ status: 403, body: { need: 'webhooks:read' } });
  });

  it('DNS rebinding: a URL that resolved publicly when saved but privately at delivery time is never connected to', async () => {
    const { call, workspaceId } = await workspace();
    const { webhook } = (await call('POST', '/webhooks', { url: 'https://hooks.example.com/in', events: ['domain.verified'] })).body as { webhook: WebhookBody };
    await insertPlatformEvent(api.db, workspaceId, { type: 'domain.verified', data: { id: 'd1' } });
    const [delivery] = await api.db.query<{ id: string }>('SELECT id FROM webhook_deliveries WHERE webhook_id = $1', {
      bind: [webhook.id],
      type: QueryTypes.SELECT,
    });
    // The name now answers a private address; the call goes through the same fetcher as attachments.
    const rebound = createWebhookActivities({
      db: api.db,
      keyring: configKeyring(api.config),
      fetch: { resolveHost: standInResolver({ 'hooks.example.com': ['10.0.0.7'] }) },
    });
    const guard = guardSockets();
    try {
      expect(await rebound.attemptWebhookDelivery({ workspaceId, deliveryId: delivery.id, run: 1, retryInMs: 5_000 })).toBe('retrying');
      expect(guard.attempts.filter((attempt) => attempt.startsWith('10.'))).toEqual([]);
    } finally {
      guard.restore();
    }
    const { deliveries } = (await call('GET', `/webhooks/${webhook.id}/deliveries`)).body as {
      deliveries: Array<{ status: string; statusCode: number | null; nextAttemptAt: string | null; attempts: Array<{ status: string; error: string }> }>;
    };
    expect(deliveries).toEqual([
      expect.objectContaining({
        status: 'pending',
        statusCode: null,
        nextAttemptAt: expect.any(String),
        attempts: [expect.objectContaining({ attempt: 1, status: 'failed', statusCode: null, error: expect.stringMatching(/^hooks\.example\.com is not allowed: a host must resolve to public addresses only$/) })],
      }),
    ]);
  });
});
