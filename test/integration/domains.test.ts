import { randomUUID } from 'node:crypto';
import { connectTemporal } from '../../temporal/connection';
import { NativeConnection, type Worker } from '@temporalio/worker';
import { createActivities } from '../../activities';
import { domainVerificationWorkflowId } from '../../core/ids';
import { saveDomainCheck } from '../../db/repositories/domains';
import { listPlatformEvents } from '../../db/repositories/platform-events';
import { createControlWorker } from '../../workers/create-worker';
import { SEARCH_ATTRIBUTE } from '../../temporal/search-attributes';
import { type ApiHarness, startApi } from '../helpers/api-harness';
import { startDnsServer, type TestDnsServer } from '../helpers/dns-server';
import { createTestWorkspace, type TestWorkspace } from '../helpers/workspaces';
import { temporalPorts } from '../../temporal/activity-ports';
import { lazyTemporalClient } from '../../temporal/connection';

interface PublishedRecord {
  record: 'spf' | 'dkim' | 'dmarc' | 'mx' | 'return_path_mx' | 'return_path_spf';
  type: string;
  name: string;
  value: string;
  status: string;
  detail?: string;
}

interface Created {
  id: string;
  name: string;
  status: string;
  dnsRecords: PublishedRecord[];
  zoneFile: string;
}

const uniqueName = () => `d${randomUUID().slice(0, 12)}.example.com`;

describe('sending domains', () => {
  const prefix = `test-${randomUUID()}-`;
  let dns: TestDnsServer;
  let api: ApiHarness;
  let nativeConnection: NativeConnection;
  let worker: Worker;
  let running: Promise<void>;
  const createdIds: string[] = [];

  beforeAll(async () => {
    dns = await startDnsServer();
    api = await startApi({ DNS_SERVERS: dns.address, TASK_QUEUE_PREFIX: prefix, RATE_LIMIT_PER_SECOND: '1000' });
    nativeConnection = await NativeConnection.connect({ address: api.config.TEMPORAL_ADDRESS });
    worker = await createControlWorker({
      connection: nativeConnection,
      namespace: api.config.TEMPORAL_NAMESPACE,
      taskQueuePrefix: prefix,
      activities: createActivities({ db: api.db, config: api.config, temporal: temporalPorts(lazyTemporalClient(api.config), api.config.TASK_QUEUE_PREFIX) }),
    });
    running = worker.run();
  });

  afterAll(async () => {
    // The background verifications would otherwise sleep on the shared dev server for days.
    const client = await connectTemporal(api.config);
    await Promise.allSettled(createdIds.map((id) => client.workflow.getHandle(domainVerificationWorkflowId(id)).terminate('test over')));
    await client.connection.close();
    worker.shutdown();
    await running;
    await nativeConnection.close();
    await api.close();
    await dns.close();
  });

  async function createDomain(workspace: TestWorkspace, name = uniqueName()): Promise<Created> {
    const response = await api.call('POST', '/api/v1/domains', { key: workspace.apiKey, body: { name } });
    expect(response.status).toBe(201);
    const created = response.body as Created;
    createdIds.push(created.id);
    return created;
  }

  /** Publishes the records the API answered, as a customer would, except those the test overrides. */
  function publish(created: Created, overrides: Partial<Record<'spf' | 'dkim' | 'dmarc', string | null>> = {}): void {
    for (const record of created.dnsRecords) {
      // The bounce subdomain's MX (optional: it never decides verification) is published too, as a customer would.
      if (record.record === 'return_path_mx') dns.setMx(record.name, { exchange: record.value, priority: 10 });
      if (record.type !== 'TXT') continue;
      const value = record.record in overrides ? overrides[record.record as 'spf' | 'dkim' | 'dmarc'] : record.value;
      if (value === null || value === undefined) dns.remove(record.name);
      else dns.setTxt(record.name, value);
    }
  }

  const verify = (workspace: TestWorkspace, id: string) => api.call('POST', `/api/v1/domains/${id}/verify`, { key: workspace.apiKey });

  it('a new domain is pending and answers the SPF, DKIM and DMARC records to publish, also as a zone file', async () => {
    const workspace = await createTestWorkspace(api);
    const name = uniqueName();
    const created = await createDomain(workspace, name.toUpperCase());
    expect(created).toMatchObject({ name, status: 'pending' });
    const [spf, dkim, dmarc] = created.dnsRecords;
    expect(spf).toMatchObject({ record: 'spf', type: 'TXT', name, value: 'v=spf1 include:spf.messaging.local ~all', status: 'pending' });
    expect(dkim.name).toMatch(new RegExp(`^msg[a-z0-9]{8}\\._domainkey\\.${name.replace(/\./g, '\\.')}$`));
    expect(dkim.value).toMatch(/^v=DKIM1; k=rsa; p=MIIBIjANBgkqhkiG9w0BAQEFAAOCAQ8AMIIBCgKCAQEA[A-Za-z0-9+/=]+$/);
    expect(dmarc).toMatchObject({ record: 'dmarc', name: `_dmarc.${name}`, value: 'v=DMARC1; p=none; adkim=r; aspf=r' });
    expect(created.dnsRecords.map((record) => record.record)).toEqual(['spf', 'dkim', 'dmarc', 'return_path_mx', 'return_path_spf']);
    expect(created.zoneFile).toMatch(new RegExp(`\\n_dmarc\\.${name.replace(/\./g, '\\.')}\\. +3600 IN TXT "v=DMARC1; p=none; adkim=r; aspf=r"\\n`));

    const detail = await api.call('GET', `/api/v1/domains/${created.id}`, { key: workspace.apiKey });
    expect(detail.body).toMatchObject({
      id: created.id,
      name,
      status: 'pending',
      region: 'us-east-1',
      inboundEnabled: false,
      defaultFromName: null,
      defaultFromAddress: null,
      dnsRecords: created.dnsRecords.map((record) => expect.objectContaining({ name: record.name, value: record.value })),
      zoneFile: created.zoneFile,
    });
    const list = await api.call('GET', '/api/v1/domains', { key: workspace.apiKey });
    expect(list.body).toEqual({ domains: [detail.body] });
  });

  it('a Unicode name is stored as its lower-case A-label form', async () => {
    const workspace = await createTestWorkspace(api);
    const label = randomUUID().slice(0, 8);
    const created = await createDomain(workspace, `Bücher-${label}.example.com`);
    expect(created.name).toMatch(/^xn--/);
    expect(created.name).toBe(new URL(`http://bücher-${label}.example.com`).hostname);
  });

  it('invalid names answer 422 in the spec\'s validation shape', async () => {
    const workspace = await createTestWorkspace(api);
    const cases: Array<[unknown, RegExp]> = [
      ['192.0.2.10', /IP address/],
      ['[2001:db8::1]', /IP address/],
      [`${'a'.repeat(64)}.example.com`, /64 characters long; a label may have at most 63/],
      [`${Array.from({ length: 5 }, () => 'a'.repeat(60)).join('.')}.com`, /at most 253 are allowed/],
      ['exa_mple.com', /only letters, digits and inner hyphens/],
      ['co.uk', /public suffix/],
      ['intranet.local', /not under a public domain suffix/],
      ['', /A domain name is required/],
    ];
    for (const [name, message] of cases) {
      const response = await api.call('POST', '/api/v1/domains', { key: workspace.apiKey, body: { name } });
      expect({ name, status: response.status }).toEqual({ name, status: 422 });
      expect(response.body).toEqual({ error: { formErrors: [], fieldErrors: { name: [expect.stringMatching(message)] } } });
    }
    const missing = await api.call('POST', '/api/v1/domains', { key: workspace.apiKey, body: { region: 'us-east-1' } });
    expect(missing.body).toEqual({ error: { formErrors: [], fieldErrors: { name: [expect.any(String)] } } });
  });

  it('a domain already added to the workspace answers 409 with its id; another workspace may still claim it while unverified', async () => {
    const owner = await createTestWorkspace(api);
    const other = await createTestWorkspace(api);
    const created = await createDomain(owner);
    const again = await api.call('POST', '/api/v1/domains', { key: owner.apiKey, body: { name: created.name } });
    expect(again).toMatchObject({ status: 409, body: { error: 'conflict', message: `${created.name} is already added to this workspace`, id: created.id } });
    const elsewhere = await api.call('POST', '/api/v1/domains', { key: other.apiKey, body: { name: created.name.toUpperCase() } });
    expect(elsewhere).toMatchObject({ status: 201, body: { name: created.name, status: 'pending' } });
    createdIds.push((elsewhere.body as Created).id);
  });

  it('two workspaces claim one name: the one whose records are published verifies, the other fails with the reason, a third gets 409', async () => {
    const squatter = await createTestWorkspace(api);
    const owner = await createTestWorkspace(api);
    const name = uniqueName();
    const squatted = await createDomain(squatter, name);
    const owned = await createDomain(owner, name);
    // The DNS is the owner's: it publishes the owner's records only.
    publish(owned);
    expect((await verify(squatter, squatted.id)).body).toMatchObject({ status: 'failed', detail: expect.stringMatching(/^No DKIM record found/) });
    expect((await verify(owner, owned.id)).body).toMatchObject({ status: 'verified' });

    // Even with its records published too, the squatter's claim cannot take a verified name.
    publish(squatted);
    const lost = await verify(squatter, squatted.id);
    expect(lost).toMatchObject({
      status: 200,
      body: {
        status: 'failed',
        detail: `${name} is already verified by another workspace. A domain sends for one workspace only, the first to verify it, so this claim cannot be verified while that one stays verified.`,
      },
    });
    expect((await api.call('GET', `/api/v1/domains/${owned.id}`, { key: owner.apiKey })).body).toMatchObject({ status: 'verified' });

    const third = await createTestWorkspace(api);
    const refused = await api.call('POST', '/api/v1/domains', { key: third.apiKey, body: { name } });
    expect(refused).toMatchObject({ status: 409, body: { error: 'conflict', message: `${name} is already verified by another workspace` } });
    expect(refused.body).not.toHaveProperty('id');
  });

  it('two claims whose checks pass at the same moment: the database lets one verify, the other fails with the reason (no error)', async () => {
    const name = uniqueName();
    const first = await createTestWorkspace(api);
    const second = await createTestWorkspace(api);
    const claims = [await createDomain(first, name), await createDomain(second, name)];
    for (const claim of claims) publish(claim);
    const { checkDomain } = createActivities({ db: api.db, config: api.config, temporal: temporalPorts(lazyTemporalClient(api.config), api.config.TASK_QUEUE_PREFIX) });
    const results = await Promise.all(
      [first, second].map((workspace, index) => checkDomain({ workspaceId: workspace.workspaceId, domainId: claims[index].id, failPending: true })),
    );
    expect(results.map((result) => (result.found ? result.status : 'missing')).sort()).toEqual(['failed', 'verified']);
    expect(results.find((result) => result.found && result.status === 'failed')).toMatchObject({ detail: expect.stringMatching(/is already verified by another workspace/) });
  });

  it('the unique index refuses a second verified domain of one name inside a transaction that carries on', async () => {
    const name = uniqueName();
    const [first, second] = [await createTestWorkspace(api), await createTestWorkspace(api)];
    const claims = [await createDomain(first, name), await createDomain(second, name)];
    // The first claim's own background check runs alongside; with its records published, that check can only
    // confirm the verified status saved here, never overwrite it with pending.
    publish(claims[0]);
    const verified = { status: 'verified' as const, detail: null, recordChecks: [] };
    expect(await saveDomainCheck(api.db, first.workspaceId, claims[0].id, verified)).toMatchObject({ saved: { status: 'verified' } });
    await api.db.transaction(async (transaction) => {
      expect(await saveDomainCheck(api.db, second.workspaceId, claims[1].id, verified, transaction)).toEqual({ verifiedElsewhere: true });
      const failed = { status: 'failed' as const, detail: 'lost', recordChecks: [] };
      expect(await saveDomainCheck(api.db, second.workspaceId, claims[1].id, failed, transaction)).toMatchObject({ saved: { status: 'failed' } });
    });
  });

  it('the verification window ends without the records checking: the claim expires as failed, saying so, and reserves nothing', async () => {
    const workspace = await createTestWorkspace(api);
    const created = await createDomain(workspace);
    // The last check of the 72-hour window, as the verification workflow runs it.
    const { checkDomain } = createActivities({ db: api.db, config: api.config, temporal: temporalPorts(lazyTemporalClient(api.config), api.config.TASK_QUEUE_PREFIX) });
    const result = await checkDomain({ workspaceId: workspace.workspaceId, domainId: created.id, failPending: true, windowEnded: true });
    expect(result).toMatchObject({
      status: 'failed',
      previousStatus: 'pending',
      detail: expect.stringMatching(
        /^No SPF record found.* The 72-hour verification window has passed without the records checking, so this claim has expired; it reserves nothing\. Correct the records and call POST \/domains\/\{id\}\/verify to check again and open a new window\.$/,
      ),
    });
    expect((await listPlatformEvents(api.db, workspace.workspaceId)).map((event) => event.type)).toEqual(['domain.failed']);

    // Someone else, who controls the DNS, adds and verifies the name.
    const owner = await createTestWorkspace(api);
    const owned = await createDomain(owner, created.name);
    publish(owned);
    expect((await verify(owner, owned.id)).body).toMatchObject({ status: 'verified' });
  });

  it('pending becomes verified once SPF, DKIM and DMARC are published, with a domain.verified event', async () => {
    const workspace = await createTestWorkspace(api);
    const created = await createDomain(workspace);
    publish(created);
    const response = await verify(workspace, created.id);
    expect(response.status).toBe(200);
    expect(response.body).toEqual({
      id: created.id,
      status: 'verified',
      dnsRecords: created.dnsRecords.map((record) => ({ ...record, status: 'verified' })),
    });
    const detail = await api.call('GET', `/api/v1/domains/${created.id}`, { key: workspace.apiKey });
    expect(detail.body).toMatchObject({ status: 'verified', detail: null, verifiedAt: expect.any(String), lastCheckedAt: expect.any(String) });
    const events = await listPlatformEvents(api.db, workspace.workspaceId);
    expect(events.map((event) => [event.type, event.data.id, event.data.status])).toEqual([['domain.verified', created.id, 'verified']]);
  });

  it('a wrong DKIM key, a missing DMARC and an SPF without our include each fail with a precise detail', async () => {
    const workspace = await createTestWorkspace(api);
    const cases = [
      {
        overrides: { dkim: 'v=DKIM1; k=rsa; p=MIIBIjANBgkqhkiG9w0BAQEFAAOCAQ8AMIIBCgKCAQEAwrongkey' },
        detail: (c: Created) =>
          `The DKIM record at ${c.dnsRecords[1].name} carries a different public key than the one generated for ${c.name}. Replace its value with the DKIM value listed in dnsRecords.`,
        failed: 'dkim',
      },
      {
        overrides: { dmarc: null },
        detail: (c: Created) => `No DMARC record found at _dmarc.${c.name}. Publish a TXT record at _dmarc.${c.name} with the value "v=DMARC1; p=none; adkim=r; aspf=r".`,
        failed: 'dmarc',
      },
      {
        overrides: { spf: 'v=spf1 ip4:192.0.2.0/24 -all' },
        detail: (c: Created) =>
          `The SPF record of ${c.name} ("v=spf1 ip4:192.0.2.0/24 -all") does not include spf.messaging.local; add include:spf.messaging.local before ~all.`,
        failed: 'spf',
      },
    ] as const;
    for (const scenario of cases) {
      const created = await createDomain(workspace);
      publish(created, scenario.overrides);
      const response = await verify(workspace, created.id);
      const body = response.body as { status: string; detail: string; dnsRecords: PublishedRecord[] };
      expect({ status: response.status, verdict: body.status, detail: body.detail }).toEqual({ status: 200, verdict: 'failed', detail: scenario.detail(created) });
      expect(body.dnsRecords.filter((record) => record.status === 'failed').map((record) => record.record)).toEqual([scenario.failed]);
      expect(body.dnsRecords.find((record) => record.record === scenario.failed)?.detail).toBe(scenario.detail(created));
    }
    const events = await listPlatformEvents(api.db, workspace.workspaceId);
    expect(events.map((event) => event.type)).toEqual(['domain.failed', 'domain.failed', 'domain.failed']);
  });

  it('an SPF record that needs more than 10 DNS lookups fails', async () => {
    const workspace = await createTestWorkspace(api);
    const created = await createDomain(workspace);
    const vendor = `spf.${created.name}`;
    publish(created, { spf: `v=spf1 a mx include:${vendor} include:spf.messaging.local ~all` });
    dns.setTxt(vendor, 'v=spf1 a mx ptr a:one.example a:two.example mx:three.example exists:four.example -all');
    const response = await verify(workspace, created.id);
    expect(response.body).toMatchObject({ status: 'failed', detail: expect.stringMatching(new RegExp(`^The SPF record of ${created.name.replace(/\./g, '\\.')} needs more than 10 DNS lookups`)) });
  });

  it('drift: the daily check of a verified domain whose DMARC record went away marks it failed', async () => {
    const workspace = await createTestWorkspace(api);
    const created = await createDomain(workspace);
    publish(created);
    expect((await verify(workspace, created.id)).body).toMatchObject({ status: 'verified' });

    dns.remove(`_dmarc.${created.name}`);
    // What the verification workflow runs every 24 hours for a verified domain.
    const { checkDomain } = createActivities({ db: api.db, config: api.config, temporal: temporalPorts(lazyTemporalClient(api.config), api.config.TASK_QUEUE_PREFIX) });
    const result = await checkDomain({ workspaceId: workspace.workspaceId, domainId: created.id, failPending: true });
    expect(result).toMatchObject({ found: true, previousStatus: 'verified', status: 'failed', detail: expect.stringMatching(/^No DMARC record found/) });
    const detail = await api.call('GET', `/api/v1/domains/${created.id}`, { key: workspace.apiKey });
    expect(detail.body).toMatchObject({ status: 'failed', verifiedAt: null, detail: expect.stringMatching(/^No DMARC record found/) });
    const events = await listPlatformEvents(api.db, workspace.workspaceId);
    expect(events.map((event) => [event.type, event.data.previousStatus])).toEqual([
      ['domain.verified', 'pending'],
      ['domain.failed', 'verified'],
    ]);
  });

  it('a DNS server failure changes nothing: a verified domain stays verified and the detail says why', async () => {
    const workspace = await createTestWorkspace(api);
    const created = await createDomain(workspace);
    publish(created);
    await verify(workspace, created.id);
    dns.failWith(`_dmarc.${created.name}`);
    const response = await verify(workspace, created.id);
    expect(response.body).toMatchObject({ status: 'verified' });
    const detail = await api.call('GET', `/api/v1/domains/${created.id}`, { key: workspace.apiKey });
    expect(detail.body).toMatchObject({ status: 'verified', detail: expect.stringMatching(/The DNS lookup of _dmarc\..* failed \(the DNS server reported a failure\)/) });
    expect((await listPlatformEvents(api.db, workspace.workspaceId)).map((event) => event.type)).toEqual(['domain.verified']);
  });

  it('PATCH sets the default sender name and an address on the domain; an address elsewhere is 422', async () => {
    const workspace = await createTestWorkspace(api);
    const created = await createDomain(workspace);
    const path = `/api/v1/domains/${created.id}`;
    const patched = await api.call('PATCH', path, { key: workspace.apiKey, body: { defaultFromName: 'Acme Billing', defaultFromAddress: `billing@${created.name.toUpperCase()}` } });
    expect(patched).toMatchObject({ status: 200, body: { defaultFromName: 'Acme Billing', defaultFromAddress: `billing@${created.name}` } });
    const elsewhere = await api.call('PATCH', path, { key: workspace.apiKey, body: { defaultFromAddress: 'billing@other.example.com' } });
    expect(elsewhere).toMatchObject({ status: 422, body: { error: { formErrors: [], fieldErrors: { defaultFromAddress: [`The default from address must be on ${created.name}`] } } } });
    const injection = await api.call('PATCH', path, { key: workspace.apiKey, body: { defaultFromName: 'Acme\r\nBcc: x@example.com' } });
    expect(injection.status).toBe(422);
    const cleared = await api.call('PATCH', path, { key: workspace.apiKey, body: { defaultFromName: null } });
    expect(cleared.body).toMatchObject({ defaultFromName: null, defaultFromAddress: `billing@${created.name}` });
  });

  it('inbound on answers the MX host and adds the MX record; off answers the same shape without it', async () => {
    const workspace = await createTestWorkspace(api);
    const created = await createDomain(workspace);
    const on = await api.call('POST', `/api/v1/domains/${created.id}/inbound`, { key: workspace.apiKey });
    expect(on).toMatchObject({ status: 200, body: { id: created.id, inboundEnabled: true, mx: 'inbound.messaging.local' } });
    const detail = await api.call('GET', `/api/v1/domains/${created.id}`, { key: workspace.apiKey });
    expect(detail.body).toMatchObject({ inboundEnabled: true });
    expect((detail.body as Created).dnsRecords.at(-1)).toEqual({
      record: 'mx',
      type: 'MX',
      name: created.name,
      value: 'inbound.messaging.local',
      priority: 10,
      ttl: 3600,
      status: 'pending',
    });
    const off = await api.call('DELETE', `/api/v1/domains/${created.id}/inbound`, { key: workspace.apiKey });
    expect(off).toMatchObject({ status: 200, body: { id: created.id, inboundEnabled: false } });
    expect(off.body).not.toHaveProperty('mx');
  });

  it('another workspace can neither see, change, verify nor toggle the domain: 404 as if it did not exist', async () => {
    const owner = await createTestWorkspace(api);
    const other = await createTestWorkspace(api);
    const created = await createDomain(owner);
    const requests: Array<[string, string, unknown?]> = [
      ['GET', `/api/v1/domains/${created.id}`],
      ['PATCH', `/api/v1/domains/${created.id}`, { defaultFromName: 'Mallory' }],
      ['POST', `/api/v1/domains/${created.id}/verify`],
      ['POST', `/api/v1/domains/${created.id}/inbound`],
      ['DELETE', `/api/v1/domains/${created.id}/inbound`],
    ];
    for (const [method, path, body] of requests) {
      const response = await api.call(method, path, { key: other.apiKey, body });
      expect({ method, path, status: response.status, error: (response.body as { error: string }).error }).toEqual({ method, path, status: 404, error: 'not_found' });
    }
    expect((await api.call('GET', '/api/v1/domains', { key: other.apiKey })).body).toEqual({ domains: [] });
    const untouched = await api.call('GET', `/api/v1/domains/${created.id}`, { key: owner.apiKey });
    expect(untouched.body).toMatchObject({ defaultFromName: null, inboundEnabled: false, status: 'pending' });
  });

  it('creating its background verification: the workflow runs with the domain\'s deterministic id on the control-plane queue', async () => {
    const workspace = await createTestWorkspace(api);
    const created = await createDomain(workspace);
    const client = await connectTemporal(api.config);
    try {
      const description = await client.workflow.getHandle(domainVerificationWorkflowId(created.id)).describe();
      expect(description.status.name).toBe('RUNNING');
      expect(description.taskQueue).toBe(`${prefix}control`);
      expect(description.typedSearchAttributes.get(SEARCH_ATTRIBUTE.WorkspaceId)).toBe(workspace.workspaceId);
    } finally {
      await client.connection.close();
    }
  });
});

describe('sending domains while Temporal is unreachable', () => {
  let api: ApiHarness;
  beforeAll(async () => {
    // Nothing listens on port 9 (discard) of loopback: every Temporal call fails at once.
    api = await startApi({ TEMPORAL_ADDRESS: '127.0.0.1:9' });
  });
  afterAll(() => api.close());

  it('a domain is still created; verify answers 503 instead of hanging', async () => {
    const workspace = await createTestWorkspace(api);
    const response = await api.call('POST', '/api/v1/domains', { key: workspace.apiKey, body: { name: uniqueName() } });
    expect(response).toMatchObject({ status: 201, body: { status: 'pending' } });
    const started = Date.now();
    const verify = await api.call('POST', `/api/v1/domains/${(response.body as Created).id}/verify`, { key: workspace.apiKey });
    expect(verify).toMatchObject({ status: 503, body: { error: 'service_unavailable', message: expect.stringMatching(/cannot be reached/) } });
    expect(Date.now() - started).toBeLessThan(10_000);
  });
});
