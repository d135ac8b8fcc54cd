import { QueryTypes } from 'sequelize';
import { periodKey, usagePeriodAt } from '../../core/plans';
import { startEmailStack, type EmailStack } from '../helpers/email-stack';
import { createList, messageStatuses, seedContacts, sendNow, waitForCampaign } from '../helpers/campaigns';
import { createTestWorkspace } from '../helpers/workspaces';

// Campaigns through the real API, workflow, dispatcher and workers, with an SMTP sink as the provider.
let stack: EmailStack;
beforeAll(async () => {
  stack = await startEmailStack({ overrides: { RATE_LIMIT_PER_SECOND: '1000' } });
});
afterAll(() => stack.close());

jest.setTimeout(120_000);

async function sender(plan: 'free' | 'pro' = 'free') {
  const workspace = await createTestWorkspace(stack.api, { plan, domain: true });
  const { domain } = workspace;
  return { ...workspace, from: `News <news@${domain}>` };
}

describe('drafts', () => {
  it('a draft is created, read, listed and edited; only the fields present change', async () => {
    const { call, from } = await sender();
    const listId = await createList(call);
    const created = await call('POST', '/campaigns', { name: 'Spring sale', fromAddress: from, listId, subject: 'Spring', html: '<p>Sale</p>' });
    expect(created).toMatchObject({ status: 201, body: { name: 'Spring sale', status: 'draft', listId, segmentId: null, recipientCount: 0, subject: 'Spring' } });
    const id = (created.body as { id: string }).id;

    const edited = await call('PATCH', `/campaigns/${id}`, { subject: 'Spring, again' });
    expect(edited).toMatchObject({ status: 200, body: { subject: 'Spring, again', html: '<p>Sale</p>', listId } });
    const listed = await call('GET', '/campaigns');
    expect(listed).toMatchObject({ status: 200, body: { total: 1, campaigns: [{ id, name: 'Spring sale', status: 'draft' }] } });
    expect((listed.body as { campaigns: Array<Record<string, unknown>> }).campaigns[0]).not.toHaveProperty('metrics');
    expect((await call('GET', '/campaigns?metrics=1')).body).toMatchObject({ campaigns: [{ id, metrics: null }] });
  });

  it('invalid drafts answer 422 naming the field; an unknown template is template_not_found', async () => {
    const { call, from } = await sender();
    const listId = await createList(call);
    const segment = await call('POST', '/segments', { name: 'all', definition: { operator: 'and', rules: [] } });
    const segmentId = (segment.body as { id: string }).id;
    const both = await call('POST', '/campaigns', { name: 'x', listId, segmentId });
    expect(both).toMatchObject({ status: 422, body: { error: { fieldErrors: { segmentId: ['Give listId or segmentId, not both'] } } } });
    const unknownList = await call('POST', '/campaigns', { name: 'x', listId: '00000000-0000-4000-8000-000000000000' });
    expect(unknownList).toMatchObject({ status: 422, body: { error: { fieldErrors: { listId: ['No list with this id in the workspace'] } } } });
    expect(await call('POST', '/campaigns', { name: 'x', fromAddress: 'not an address' })).toMatchObject({ status: 422, body: { error: { fieldErrors: { fromAddress: expect.any(Array) } } } });
    expect(await call('POST', '/campaigns', { name: 'x', from, templateId: 'no-such-template' })).toMatchObject({ status: 422, body: { error: 'template_not_found' } });
    expect(await call('POST', '/campaigns', { listId })).toMatchObject({ status: 422, body: { error: { fieldErrors: { name: expect.any(Array) } } } });

    // Giving the segment replaces the list.
    const draft = await call('POST', '/campaigns', { name: 'x', listId });
    const switched = await call('PATCH', `/campaigns/${(draft.body as { id: string }).id}`, { segmentId });
    expect(switched).toMatchObject({ status: 200, body: { listId: null, segmentId } });
  });

  it("another workspace's campaign is not found", async () => {
    const owner = await sender();
    const other = await sender();
    const created = await owner.call('POST', '/campaigns', { name: 'mine' });
    const id = (created.body as { id: string }).id;
    for (const [method, path] of [['GET', ''], ['PATCH', ''], ['POST', '/estimate'], ['POST', '/send'], ['POST', '/cancel'], ['POST', '/pause']]) {
      expect(await other.call(method, `/campaigns/${id}${path}`, method === 'GET' ? undefined : {})).toMatchObject({ status: 404 });
    }
  });
});

describe('estimate', () => {
  it('counts the list, who the campaign reaches (not suppressed, not opted out, with an email), and samples up to 5', async () => {
    const { call, from, workspaceId } = await sender();
    const listId = await createList(call);
    const reached = await seedContacts(stack.api.db, workspaceId, { count: 6, prefix: 'reach', listId });
    await seedContacts(stack.api.db, workspaceId, { count: 1, prefix: 'unknown-consent', listId, consent: 'unknown' });
    await seedContacts(stack.api.db, workspaceId, { count: 2, prefix: 'optout', listId, consent: 'opted_out' });
    const [suppressed] = await seedContacts(stack.api.db, workspaceId, { count: 1, prefix: 'bounced', listId });
    await call('POST', '/suppressions', { address: suppressed.address, reason: 'manual' });
    const phoneOnly = await call('POST', '/contacts', { identities: [{ channel: 'whatsapp', address: '+14155550100' }] });
    await call('POST', `/lists/${listId}/contacts`, { contactIds: [(phoneOnly.body as { id: string }).id] });
    // Not in the list: not counted at all.
    await seedContacts(stack.api.db, workspaceId, { count: 3, prefix: 'outside' });

    const campaign = await call('POST', '/campaigns', { name: 'Estimate', fromAddress: from, listId, subject: 'S', html: '<p>x</p>' });
    const estimate = await call('POST', `/campaigns/${(campaign.body as { id: string }).id}/estimate`);
    expect(estimate).toMatchObject({ status: 200, body: { estimate: { listMembers: 11, recipients: 7, excluded: 4 }, confirmationToken: expect.any(String) } });
    const sample = (estimate.body as { estimate: { sample: string[] } }).estimate.sample;
    expect(sample).toHaveLength(5);
    const allowed = [...reached.map((contact) => contact.address), 'unknown-consent-0@example.org'];
    for (const address of sample) expect(allowed).toContain(address);
  });

  it('a segment is evaluated when estimated; without an audience the estimate is 422', async () => {
    const { call, workspaceId } = await sender();
    await seedContacts(stack.api.db, workspaceId, { count: 4, prefix: 'vip', attributes: (i) => ({ tier: i < 3 ? 'gold' : 'silver' }) });
    const segment = await call('POST', '/segments', { name: 'gold', definition: { operator: 'and', rules: [{ type: 'attribute', key: 'tier', operator: 'eq', value: 'gold' }] } });
    const campaign = await call('POST', '/campaigns', { name: 'Gold', segmentId: (segment.body as { id: string }).id });
    const id = (campaign.body as { id: string }).id;
    expect((await call('POST', `/campaigns/${id}/estimate`)).body).toMatchObject({ estimate: { listMembers: 3, recipients: 3, excluded: 0 } });
    await seedContacts(stack.api.db, workspaceId, { count: 2, prefix: 'late-gold', attributes: () => ({ tier: 'gold' }) });
    expect((await call('POST', `/campaigns/${id}/estimate`)).body).toMatchObject({ estimate: { listMembers: 5, recipients: 5 } });
    const empty = await call('POST', '/campaigns', { name: 'Nobody' });
    expect(await call('POST', `/campaigns/${(empty.body as { id: string }).id}/estimate`)).toMatchObject({ status: 422, body: { error: { fieldErrors: { listId: expect.any(Array) } } } });
  });
});

describe('send rules', () => {
  async function draft() {
    const workspace = await sender();
    const listId = await createList(workspace.call);
    await seedContacts(stack.api.db, workspace.workspaceId, { count: 2, prefix: `rules-${workspace.workspaceId.slice(0, 8)}`, listId });
    const created = await workspace.call('POST', '/campaigns', { name: 'Rules', fromAddress: workspace.from, listId, subject: 'S', html: '<p>x</p>' });
    return { ...workspace, id: (created.body as { id: string }).id };
  }

  it('sending now needs the estimate\'s token; a forged one, or one an edit voided, is refused with 422', async () => {
    const { call, id, workspaceId } = await draft();
    expect(await call('POST', `/campaigns/${id}/send`, {})).toMatchObject({ status: 422, body: { error: 'confirmation_required' } });
    expect(await call('POST', `/campaigns/${id}/send`, { confirmationToken: 'AAAA' })).toMatchObject({ status: 422, body: { error: 'confirmation_invalid' } });
    const { confirmationToken } = (await call('POST', `/campaigns/${id}/estimate`)).body as { confirmationToken: string };
    await call('PATCH', `/campaigns/${id}`, { subject: 'Edited after the estimate' });
    expect(await call('POST', `/campaigns/${id}/send`, { confirmationToken })).toMatchObject({
      status: 422,
      body: { error: 'confirmation_invalid', message: expect.stringContaining('edited') },
    });
    // Another campaign's token does not send this one.
    const other = await draft();
    const foreign = ((await other.call('POST', `/campaigns/${other.id}/estimate`)).body as { confirmationToken: string }).confirmationToken;
    expect(await call('POST', `/campaigns/${id}/send`, { confirmationToken: foreign })).toMatchObject({ status: 422, body: { error: 'confirmation_invalid' } });
    expect(await messageStatuses(stack.api.db, workspaceId, id)).toEqual({});
    expect((await call('GET', `/campaigns/${id}`)).body).toMatchObject({ status: 'draft' });
  });

  it('a send within 5 minutes needs the token; one further ahead is scheduled without it, and canceling it sends nothing', async () => {
    const { call, id, workspaceId } = await draft();
    const soon = new Date(Date.now() + 3 * 60_000).toISOString();
    expect(await call('POST', `/campaigns/${id}/send`, { scheduledAt: soon })).toMatchObject({ status: 422, body: { error: 'confirmation_required' } });
    const later = new Date(Date.now() + 60 * 60_000).toISOString();
    const scheduled = await call('POST', `/campaigns/${id}/send`, { scheduledAt: later });
    expect(scheduled).toMatchObject({ status: 202, body: { id, status: 'scheduled', scheduledAt: later, recipients: 2 } });
    expect(await call('POST', `/campaigns/${id}/send`, { scheduledAt: later })).toMatchObject({ status: 409, body: { error: 'conflict' } });
    expect(await call('PATCH', `/campaigns/${id}`, { subject: 'too late' })).toMatchObject({ status: 409 });
    expect(await call('POST', `/campaigns/${id}/pause`)).toMatchObject({ status: 409 });
    expect(await call('POST', `/campaigns/${id}/cancel`)).toMatchObject({ status: 200, body: { status: 'canceled', completedAt: expect.any(String) } });
    expect(await call('POST', `/campaigns/${id}/cancel`)).toMatchObject({ status: 409 });
    await new Promise((resolve) => setTimeout(resolve, 500));
    expect(await messageStatuses(stack.api.db, workspaceId, id)).toEqual({});
  });

  it('an incomplete draft, or one from an unverified domain, is refused at send', async () => {
    const { call, workspaceId } = await sender();
    const listId = await createList(call);
    await seedContacts(stack.api.db, workspaceId, { count: 1, prefix: `incomplete-${workspaceId.slice(0, 8)}`, listId });
    const bare = await call('POST', '/campaigns', { name: 'Bare', listId });
    const bareSend = await sendNow(call, (bare.body as { id: string }).id);
    expect(bareSend).toMatchObject({ status: 422, body: { error: { fieldErrors: { fromAddress: expect.any(Array), subject: expect.any(Array), html: expect.any(Array) } } } });
    const unverified = await call('POST', '/campaigns', { name: 'U', listId, fromAddress: 'a@not-verified.example.com', subject: 'S', text: 'T' });
    expect(await sendNow(call, (unverified.body as { id: string }).id)).toMatchObject({ status: 403, body: { error: 'domain_not_verified' } });
  });

  it('a campaign that would pass the plan\'s monthly quota is refused with 402 before anything goes', async () => {
    const { call, from, workspaceId } = await sender('free');
    const listId = await createList(call);
    await seedContacts(stack.api.db, workspaceId, { count: 5, prefix: `quota-${workspaceId.slice(0, 8)}`, listId });
    await stack.api.db.query('INSERT INTO usage_counters (workspace_id, period_start, used) VALUES ($1, $2, 2998)', {
      bind: [workspaceId, periodKey(usagePeriodAt(new Date()))],
    });
    const campaign = await call('POST', '/campaigns', { name: 'Too big', fromAddress: from, listId, subject: 'S', text: 'T' });
    const id = (campaign.body as { id: string }).id;
    expect(await sendNow(call, id)).toMatchObject({
      status: 402,
      body: { error: 'quota_exceeded', resource: 'messages', limit: 3000, used: 2998, remaining: 2, plan: 'free' },
    });
    expect((await call('GET', `/campaigns/${id}`)).body).toMatchObject({ status: 'draft' });
  });
});

describe('sending', () => {
  it('every recipient gets one email, marked as campaign mail with one-click unsubscribe; the campaign ends sent with its figures', async () => {
    const { call, from, workspaceId } = await sender();
    const listId = await createList(call);
    const prefix = `e2e-${workspaceId.slice(0, 8)}`;
    const contacts = await seedContacts(stack.api.db, workspaceId, { count: 12, prefix, listId });
    const campaign = await call('POST', '/campaigns', { name: 'Launch', fromAddress: from, listId, subject: 'We launched', html: '<p>Hello</p>' });
    const id = (campaign.body as { id: string }).id;
    const sent = await sendNow(call, id);
    expect(sent).toMatchObject({ status: 202, body: { id, status: 'sending', scheduledAt: null, recipients: 12 } });

    const done = await waitForCampaign(call, id, ['sent']);
    expect(done).toMatchObject({ recipientCount: 12, completedAt: expect.any(String), progress: { recipients: 12, sent: 12, failed: 0, canceled: 0 } });
    expect(done.metrics).toMatchObject({ recipients: 12, delivered: 0, uniqueOpens: 0, openRate: null, bounceRate: 0 });
    const mails = stack.sink.received.filter((mail) => mail.recipients[0]?.startsWith(`${prefix}-`));
    expect(mails.map((mail) => mail.recipients[0]).sort()).toEqual(contacts.map((contact) => contact.address).sort());
    for (const mail of mails) {
      expect(mail.raw).toMatch(/^List-Unsubscribe:\s+<http/m);
      expect(mail.raw).toMatch(/^Subject: We launched/m);
    }
    const listed = await call('GET', `/emails?campaignId=${id}&limit=100`);
    expect(listed.body).toMatchObject({ total: 12 });
    for (const row of (listed.body as { data: Array<Record<string, unknown>> }).data) expect(row).toMatchObject({ kind: 'campaign', campaignId: id, status: 'sent' });
    expect((await call('GET', '/usage')).body).toMatchObject({ messages: { used: 12 } });
  });

  it('a template campaign renders each message with its contact, and keeps the template in use until it is sent', async () => {
    const { call, from, workspaceId } = await sender();
    const listId = await createList(call);
    const prefix = `tpl-${workspaceId.slice(0, 8)}`;
    await seedContacts(stack.api.db, workspaceId, { count: 3, prefix, listId, attributes: (i) => ({ firstName: `Ann${i}` }) });
    const template = await call('POST', '/templates', { name: 'Welcome', format: 'html', subject: 'Hi {{ contact.firstName }}', body: '<p>Hello {{ contact.firstName }} ({{ contact.email }})</p>' });
    const templateId = (template.body as { id: string }).id;
    const campaign = await call('POST', '/campaigns', { name: 'Personal', fromAddress: from, listId, templateId: 'welcome' });
    expect(campaign.body).toMatchObject({ templateId });
    const id = (campaign.body as { id: string }).id;
    expect(await call('DELETE', `/templates/${templateId}`)).toMatchObject({ status: 409, body: { error: 'conflict' } });

    expect(await sendNow(call, id)).toMatchObject({ status: 202 });
    await waitForCampaign(call, id, ['sent']);
    const mails = stack.sink.received.filter((mail) => mail.recipients[0]?.startsWith(`${prefix}-`));
    expect(mails).toHaveLength(3);
    for (const mail of mails) {
      const i = mail.recipients[0].replace(`${prefix}-`, '').replace('@example.org', '');
      expect(mail.raw).toContain(`Subject: Hi Ann${i}`);
      expect(mail.raw).toContain(`${prefix}-${i}@example.org`);
    }
    expect(await call('DELETE', `/templates/${templateId}`)).toMatchObject({ status: 200 });
  });

  it('an audience without recipients ends sent at once, with no messages', async () => {
    const { call, from, workspaceId } = await sender();
    const listId = await createList(call);
    const campaign = await call('POST', '/campaigns', { name: 'Empty', fromAddress: from, listId, subject: 'S', text: 'T' });
    const id = (campaign.body as { id: string }).id;
    expect(await sendNow(call, id)).toMatchObject({ status: 202, body: { recipients: 0 } });
    expect(await waitForCampaign(call, id, ['sent'])).toMatchObject({ recipientCount: 0, metrics: null });
    const [row] = await stack.api.db.query<{ n: string }>('SELECT count(*) AS n FROM messages WHERE workspace_id = $1', { bind: [workspaceId], type: QueryTypes.SELECT });
    expect(Number(row.n)).toBe(0);
  });
});
