import { randomUUID } from 'node:crypto';
import { CreateEmailIdentityCommand, ListEmailIdentitiesCommand, SESv2Client } from '@aws-sdk/client-sesv2';
import { QueryTypes } from 'sequelize';
import { type ApiHarness, startApi } from '../helpers/api-harness';
import { createTestWorkspace } from '../helpers/workspaces';

// DELETE /domains/:id through the real API and database: what still sends from a domain keeps it, and a
// deleted domain takes its DKIM keys with it while the mail it sent stays.
let api: ApiHarness;
beforeAll(async () => {
  // A queue prefix of its own: no worker on the shared Temporal server picks up what starts here.
  api = await startApi({ RATE_LIMIT_PER_SECOND: '1000', TASK_QUEUE_PREFIX: `domain-deletion-${randomUUID().slice(0, 8)}-` });
});
afterAll(() => api.close());

jest.setTimeout(60_000);

const count = async (sql: string, bind: unknown[]) =>
  Number((await api.db.query<{ count: string }>(sql, { bind, type: QueryTypes.SELECT }))[0].count);

describe('DELETE /domains/:id', () => {
  it('a domain nothing uses → 204; its row and DKIM keys are gone, the messages it sent stay', async () => {
    const { call, workspaceId, domain, domainId } = await createTestWorkspace(api, { plan: 'pro', domain: true });
    const sent = await call('POST', '/emails', { from: `hello@${domain}`, to: 'ann@example.org', subject: 'Hi', text: 'Hello', idempotencyKey: randomUUID() });
    expect(sent).toMatchObject({ status: 202 });

    const deleted = await call('DELETE', `/domains/${domainId}`);
    expect(deleted.status).toBe(204);
    expect(deleted.body).toBeUndefined();
    expect(await count('SELECT count(*) FROM domains WHERE id = $1', [domainId])).toBe(0);
    expect((await call('GET', `/domains/${domainId}`)).status).toBe(404);
    expect(await count('SELECT count(*) FROM messages WHERE workspace_id = $1 AND id = $2', [workspaceId, (sent.body as { id: string }).id])).toBe(1);
    expect((await call('DELETE', `/domains/${domainId}`)).status).toBe(404);
  });

  it('another workspace\'s domain → 404 not_found, and it stays', async () => {
    const owner = await createTestWorkspace(api, { domain: true });
    const other = await createTestWorkspace(api);
    expect(await other.call('DELETE', `/domains/${owner.domainId}`)).toMatchObject({ status: 404, body: { error: 'not_found' } });
    expect((await owner.call('GET', `/domains/${owner.domainId}`)).status).toBe(200);
  });

  it('a scheduled campaign, an active journey and an inbox on it → 409 conflict naming each in usedBy; once they are gone → 204', async () => {
    const { call, workspaceId, domain, domainId } = await createTestWorkspace(api, { plan: 'pro', domain: true });
    const campaign = await call('POST', '/campaigns', { name: 'Launch', fromAddress: `News <news@${domain}>`, subject: 'S', text: 'T' });
    expect(campaign.status).toBe(201);
    const campaignId = (campaign.body as { id: string }).id;
    // Scheduling needs an audience and a confirmation: what matters here is only the state it ends in.
    await api.db.query("UPDATE campaigns SET status = 'scheduled' WHERE id = $1", { bind: [campaignId] });
    const draftCampaign = await call('POST', '/campaigns', { name: 'Later', fromAddress: `news@${domain}` });
    expect(draftCampaign.status).toBe(201);

    const template = await call('POST', '/templates', { name: `t-${randomUUID()}`, subject: 'Welcome', body: '<p>Hi</p>' });
    const templateId = ((template.body as { id?: string; template?: { id: string } }).id ?? (template.body as { template: { id: string } }).template.id);
    const graph = { entry: 'hello', nodes: [{ id: 'hello', type: 'message', preferredChannel: 'email', templateByChannel: { email: templateId }, from: `team@${domain}`, next: null }] };
    const journey = await call('POST', '/automations', { name: 'Welcome', trigger: { event: 'signed_up' }, graph });
    expect(journey.status).toBe(201);
    const journeyId = (journey.body as { id: string }).id;
    expect((await call('POST', `/automations/${journeyId}/activate`)).status).toBe(200);

    const inbox = await call('POST', '/inboxes', { domainId, localPart: 'support' });
    expect(inbox.status).toBe(201);
    const inboxId = (inbox.body as { inbox: { id: string } }).inbox.id;
    expect((await call('PATCH', `/inboxes/${inboxId}`, { status: 'disabled' })).status).toBe(200);

    const refused = await call('DELETE', `/domains/${domainId}`);
    expect(refused).toMatchObject({ status: 409, body: { error: 'conflict', message: expect.any(String) } });
    expect((refused.body as { usedBy: unknown }).usedBy).toEqual({
      campaigns: [{ id: campaignId, name: 'Launch', status: 'scheduled' }],
      journeys: [{ id: journeyId, name: 'Welcome', status: 'active' }],
      inboxes: [{ id: inboxId, address: `support@${domain}`, status: 'disabled' }],
    });
    expect((await call('GET', `/domains/${domainId}`)).status).toBe(200);

    expect((await call('POST', `/campaigns/${campaignId}/cancel`)).status).toBe(200);
    expect((await call('POST', `/automations/${journeyId}/archive`)).status).toBeLessThan(300);
    expect((await call('DELETE', `/inboxes/${inboxId}`)).status).toBe(200);
    expect((await call('DELETE', `/domains/${domainId}`)).status).toBe(204);
    expect(await count('SELECT count(*) FROM campaigns WHERE workspace_id = $1', [workspaceId])).toBe(2);
  });

  it('a journey step without from sends from the default sender: it uses the domain that default comes from, not another', async () => {
    const { call, domain, domainId } = await createTestWorkspace(api, { plan: 'pro', domain: true });
    expect((await call('PATCH', `/domains/${domainId}`, { defaultFromAddress: `team@${domain}` })).status).toBe(200);
    const template = await call('POST', '/templates', { name: `t-${randomUUID()}`, subject: 'Welcome', body: '<p>Hi</p>' });
    const templateId = ((template.body as { id?: string; template?: { id: string } }).id ?? (template.body as { template: { id: string } }).template.id);
    const graph = { entry: 'hello', nodes: [{ id: 'hello', type: 'message', preferredChannel: 'email', templateByChannel: { email: templateId }, next: null }] };
    const journeyId = ((await call('POST', '/automations', { name: 'Default', trigger: { event: 'signed_up' }, graph })).body as { id: string }).id;
    expect((await call('POST', `/automations/${journeyId}/activate`)).status).toBe(200);
    expect(await call('DELETE', `/domains/${domainId}`)).toMatchObject({ status: 409, body: { usedBy: { journeys: [{ id: journeyId }], campaigns: [], inboxes: [] } } });
  });
});

describe('DELETE /domains/:id with SES as the provider (the AWS stand-in)', () => {
  let sesApi: ApiHarness;
  // Endpoint and credentials from the environment, as the service's own clients take them.
  const ses = new SESv2Client({ region: 'us-east-1' });
  beforeAll(async () => {
    sesApi = await startApi({
      RATE_LIMIT_PER_SECOND: '1000',
      EMAIL_PROVIDER: 'ses',
      SNS_TOPIC_ARNS: 'arn:aws:sns:us-east-1:123456789012:messaging-test',
      TASK_QUEUE_PREFIX: `domain-deletion-ses-${randomUUID().slice(0, 8)}-`,
    });
  });
  afterAll(async () => {
    ses.destroy();
    await sesApi.close();
  });

  const identities = async () => {
    const names: string[] = [];
    let NextToken: string | undefined;
    do {
      const page = await ses.send(new ListEmailIdentitiesCommand({ NextToken, PageSize: 1000 }));
      names.push(...(page.EmailIdentities ?? []).map((identity) => identity.IdentityName ?? ''));
      NextToken = page.NextToken;
    } while (NextToken);
    return names;
  };

  it('the domain\'s SES identity (our DKIM key with it) is removed; one another workspace verified under the same name is kept', async () => {
    const owner = await createTestWorkspace(sesApi, { domain: { region: 'us-east-1' } });
    await ses.send(new CreateEmailIdentityCommand({ EmailIdentity: owner.domain }));
    expect(await identities()).toContain(owner.domain);
    expect((await owner.call('DELETE', `/domains/${owner.domainId}`)).status).toBe(204);
    expect(await identities()).not.toContain(owner.domain);

    // A pending claim of a name another workspace then verified: that workspace's identity stays.
    const name = `mail-${randomUUID().slice(0, 8)}.example.com`;
    const claimant = await createTestWorkspace(sesApi, { domain: { name, verified: false, region: 'us-east-1' } });
    const verifier = await createTestWorkspace(sesApi, { domain: { name, region: 'us-east-1' } });
    await ses.send(new CreateEmailIdentityCommand({ EmailIdentity: verifier.domain }));
    expect((await claimant.call('DELETE', `/domains/${claimant.domainId}`)).status).toBe(204);
    expect(await identities()).toContain(verifier.domain);
  });
});
