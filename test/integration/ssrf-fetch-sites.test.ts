import { QueryTypes } from 'sequelize';
import { createWebhookActivities } from '../../activities/webhooks';
import { configKeyring } from '../../core/config';
import { insertPlatformEvent } from '../../db/repositories/platform-events';
import { type ApiHarness, type ApiResponse, startApi } from '../helpers/api-harness';
import { addTestDomain, createTestWorkspace } from '../helpers/workspaces';
import { guardSockets, type SocketGuard, standInResolver } from '../helpers/ssrf-stand-in';

/**
 * The SSRF matrix: every place the service fetches a customer-given URL, against every class of address
 * the fetcher must refuse, spelled as a literal and as a name resolving there. ssrf.test.ts proves the
 * fetcher's rules one by one; this proves each fetch site goes through them, and refuses without opening
 * a socket to the target.
 */
interface Target {
  label: string;
  /** What the URL names. */
  host: string;
  /** Where that host points: the literal itself, or the stand-in DNS answer for a name. */
  address: string;
}

const TARGETS: Target[] = [
  { label: 'loopback', host: '127.0.0.1', address: '127.0.0.1' },
  { label: 'loopback by name', host: 'loopback.test', address: '127.0.0.1' },
  { label: 'private', host: '10.0.0.1', address: '10.0.0.1' },
  { label: 'private by name', host: 'private.test', address: '192.168.1.10' },
  { label: 'link-local metadata', host: '169.254.169.254', address: '169.254.169.254' },
  { label: 'link-local by name', host: 'linklocal.test', address: '169.254.169.254' },
  { label: 'IPv6 link-local', host: '[fe80::1]', address: 'fe80::1' },
  { label: 'CGNAT', host: '100.64.0.1', address: '100.64.0.1' },
  { label: 'CGNAT by name', host: 'cgnat.test', address: '100.100.100.200' },
  { label: 'IPv6 unique-local', host: '[fd00::1]', address: 'fd00::1' },
  { label: 'IPv6 unique-local by name', host: 'ula.test', address: 'fd12:3456::1' },
  { label: 'IPv4-mapped private', host: '[::ffff:10.0.0.1]', address: '::ffff:10.0.0.1' },
  { label: 'IPv4-mapped loopback by name', host: 'mapped.test', address: '::ffff:127.0.0.1' },
];

const names = Object.fromEntries(TARGETS.filter((target) => /[a-z]$/.test(target.host)).map((target) => [target.host, [target.address]]));
const PUBLIC = '93.184.216.34';
const resolveHost = standInResolver({ ...names, 'hooks.example.com': [PUBLIC] });

/** Connections to the refused target's port (443), or anywhere off the machine, that the guard saw. */
const toTargets = (attempts: string[]) => attempts.filter((attempt) => attempt.endsWith(':443') || !/^127\.0\.0\.1:\d+$/.test(attempt));

describe('every fetch site refuses internal addresses', () => {
  let api: ApiHarness;
  let guard: SocketGuard;
  let call: (method: string, path: string, body?: unknown) => Promise<ApiResponse>;
  let workspaceId: string;
  let from: string;
  let listId: string;
  let draftId: string;
  let webhookId: string;

  beforeAll(async () => {
    api = await startApi({ RATE_LIMIT_PER_SECOND: '1000' }, { attachmentFetch: { resolveHost }, webhookFetch: { resolveHost }, analyticsFetch: { resolveHost } });
    const workspace = await createTestWorkspace(api, { plan: 'pro' });
    workspaceId = workspace.workspaceId;
    call = api.as(workspace.apiKey);
    from = `news@${(await addTestDomain(api, workspaceId)).domain}`;
    listId = ((await call('POST', '/lists', { name: 'ssrf' })).body as { id: string }).id;
    draftId = ((await call('POST', '/campaigns', { name: 'ssrf', fromAddress: from, listId, subject: 'S', text: 'T' })).body as { id: string }).id;
    webhookId = ((await call('POST', '/webhooks', { url: 'https://hooks.example.com/in', events: ['domain.verified'] })).body as { webhook: { id: string } }).webhook.id;
    guard = guardSockets();
  });
  afterAll(async () => {
    guard.restore();
    await api.close();
  });

  const attachment = (url: string) => [{ filename: 'file.pdf', url }];
  const email = (url: string, key: string) => ({ from, to: 'reader@example.org', subject: 'S', text: 'T', attachments: attachment(url), idempotencyKey: key });

  const fieldError = (field: string) => (response: ApiResponse) =>
    (response.body as { error?: { fieldErrors?: Record<string, string[]> } }).error?.fieldErrors?.[field]?.[0];
  const attachmentRefused = /^attachments\[0\]\.url: could not be fetched: \S+ is not allowed: /;
  const webhookRefused = /^must be https and resolve to public addresses only: \S+ is not allowed: /;

  /** Each API fetch site: the request carrying the URL, the status and the reason its refusal gives. */
  const sites: Array<{ site: string; send: (url: string, key: string) => Promise<ApiResponse>; status: number; reason: (response: ApiResponse) => unknown; says: RegExp }> = [
    { site: 'POST /emails attachment url', send: (url, key) => call('POST', '/emails', email(url, key)), status: 422, reason: fieldError('attachments'), says: attachmentRefused },
    {
      site: 'POST /emails/batch attachment url',
      send: (url, key) => call('POST', '/emails/batch', { emails: [email(url, key)] }),
      // The batch answers per item, with the error code only (the reason is not carried into the item).
      status: 207,
      reason: (response) => (response.body as { results: Array<{ status: string; error?: { code: string } }> }).results.map((item) => `${item.status} ${item.error?.code}`).join(),
      says: /^failed validation_error$/,
    },
    {
      site: 'POST /campaigns attachment url',
      send: (url) => call('POST', '/campaigns', { name: 'c', fromAddress: from, listId, subject: 'S', text: 'T', attachments: attachment(url) }),
      status: 422,
      reason: fieldError('attachments'),
      says: attachmentRefused,
    },
    { site: 'PATCH /campaigns/:id attachment url', send: (url) => call('PATCH', `/campaigns/${draftId}`, { attachments: attachment(url) }), status: 422, reason: fieldError('attachments'), says: attachmentRefused },
    { site: 'POST /webhooks url', send: (url) => call('POST', '/webhooks', { url, events: ['email.sent'] }), status: 422, reason: fieldError('url'), says: webhookRefused },
    { site: 'PATCH /webhooks/:id url', send: (url) => call('PATCH', `/webhooks/${webhookId}`, { url }), status: 422, reason: fieldError('url'), says: webhookRefused },
    { site: 'POST /imports url', send: (url) => call('POST', '/imports', { provider: 'mailchimp', url }), status: 422, reason: fieldError('url'), says: /^\S+ is not allowed: / },
    {
      site: 'PUT /integrations/analytics baseUrl',
      send: (url) => call('PUT', '/integrations/analytics', { provider: 'matomo', baseUrl: url.replace(/\/file\.pdf$/, ''), siteId: 1, tokenAuth: 'token' }),
      status: 422,
      reason: fieldError('baseUrl'),
      says: /^\S+ is not allowed: /,
    },
  ];

  /** A name's refusal must not say where it resolved (an internal DNS oracle); a literal is the tenant's own words. */
  const isName = (target: Target) => /[a-z]$/.test(target.host);

  describe.each(sites)('$site', ({ site, send, status, reason, says }) => {
    it.each(TARGETS)('$label ($host) is refused, naming no resolved address, and never connected to', async (target) => {
      const attempts = guard.attempts.length;
      const response = await send(`https://${target.host}/file.pdf`, `ssrf-${site}-${target.host}`);
      expect({ status: response.status, reason: reason(response) }).toEqual({ status, reason: expect.stringMatching(says) });
      if (isName(target)) expect(JSON.stringify(response.body)).not.toContain(target.address);
      expect(toTargets(guard.attempts.slice(attempts))).toEqual([]);
    });
  });

  it('nothing refused above was stored: no message, no campaign attachment, the webhook keeps its URL', async () => {
    const [{ count }] = await api.db.query<{ count: string }>('SELECT count(*) FROM messages WHERE workspace_id = $1', { bind: [workspaceId], type: QueryTypes.SELECT });
    expect(Number(count)).toBe(0);
    expect((await call('GET', `/campaigns/${draftId}`)).body).toMatchObject({ attachments: [] });
    expect((await call('GET', `/webhooks/${webhookId}`)).body).toMatchObject({ webhook: { url: 'https://hooks.example.com/in' } });
  });

  describe('a webhook delivery attempt checks the address again (the name was public when saved)', () => {
    it.each(TARGETS)('$label ($address): the attempt fails without connecting, and the log says why without the address', async ({ address }) => {
      const { workspaceId: owner, apiKey } = await createTestWorkspace(api);
      const own = api.as(apiKey);
      const created = (await own('POST', '/webhooks', { url: 'https://hooks.example.com/in', events: ['domain.verified'] })).body as { webhook: { id: string } };
      await insertPlatformEvent(api.db, owner, { type: 'domain.verified', data: { id: 'd1' } });
      const [delivery] = await api.db.query<{ id: string }>('SELECT id FROM webhook_deliveries WHERE webhook_id = $1', {
        bind: [created.webhook.id],
        type: QueryTypes.SELECT,
      });
      const rebound = createWebhookActivities({
        db: api.db,
        keyring: configKeyring(api.config),
        fetch: { resolveHost: standInResolver({ 'hooks.example.com': [address] }) },
      });
      const attempts = guard.attempts.length;
      expect(await rebound.attemptWebhookDelivery({ workspaceId: owner, deliveryId: delivery.id, run: 1, retryInMs: 5_000 })).toBe('retrying');
      expect(toTargets(guard.attempts.slice(attempts))).toEqual([]);
      const { deliveries } = (await own('GET', `/webhooks/${created.webhook.id}/deliveries`)).body as {
        deliveries: Array<{ attempts: Array<{ status: string; statusCode: number | null; error: string }> }>;
      };
      expect(deliveries[0].attempts).toEqual([expect.objectContaining({ status: 'failed', statusCode: null, error: 'hooks.example.com is not allowed: a host must resolve to public addresses only' })]);
      expect(JSON.stringify(deliveries)).not.toContain(address);
    });
  });
});
