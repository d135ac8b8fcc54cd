import { simpleParser } from 'mailparser';
import { PLANS, usagePeriodAt } from '../../core/plans';
import { suppressAddresses } from '../../db/repositories/suppressions';
import { reserveQuota } from '../../db/repositories/usage';
import { startEmailStack, type EmailStack } from '../helpers/email-stack';
import { addTestDomain, createTestWorkspace, type TestWorkspace } from '../helpers/workspaces';

let stack: EmailStack;
beforeAll(async () => {
  stack = await startEmailStack({ overrides: { RATE_LIMIT_PER_SECOND: '1000' } });
});
afterAll(() => stack.close());

let key = 0;
const idempotencyKey = () => `key-${Date.now()}-${(key += 1)}`;

async function sender(options: { plan?: 'free' | 'pro'; defaultFromName?: string } = {}): Promise<TestWorkspace & { domain: string }> {
  const workspace = await createTestWorkspace(stack.api, { plan: options.plan ?? 'free' });
  return { ...workspace, domain: (await addTestDomain(stack, workspace.workspaceId, options)).domain };
}

function receivedBy(address: string) {
  return stack.sink.received.filter((mail) => mail.recipients.includes(address));
}

describe('POST /emails', () => {
  it('202 queued, then the workflow delivers one MIME message: several To in the To header, Cc visible, Bcc only in the envelope', async () => {
    const { apiKey, workspaceId, domain } = await sender();
    const response = await stack.api.call('POST', '/api/v1/emails', {
      key: apiKey,
      body: {
        from: `Acme <hello@${domain}>`,
        to: ['ann@example.org', '"Doe, John" <john@example.org>'],
        cc: 'cc@example.org',
        bcc: ['hidden@example.org'],
        replyTo: 'support@example.org',
        subject: 'Your order',
        html: '<p>Thanks!</p>',
        idempotencyKey: idempotencyKey(),
      },
    });
    expect(response.status).toBe(202);
    const { id } = response.body as { id: string };
    expect(response.body).toMatchObject({ id: expect.any(String), status: 'queued' });

    expect(await stack.waitForStatus(workspaceId, id, ['sent'])).toBe('sent');
    const [mail] = receivedBy('ann@example.org');
    expect(mail.recipients.sort()).toEqual(['ann@example.org', 'cc@example.org', 'hidden@example.org', 'john@example.org']);
    expect(mail.raw).not.toContain('hidden@example.org');
    const parsed = await simpleParser(mail.raw);
    expect(parsed.headers.get('to')).toMatchObject({ value: [{ address: 'ann@example.org' }, { address: 'john@example.org', name: 'Doe, John' }] });
    expect(parsed.cc).toMatchObject({ value: [{ address: 'cc@example.org' }] });
    expect(parsed.replyTo).toMatchObject({ value: [{ address: 'support@example.org' }] });
    expect(parsed.subject).toBe('Your order');
    expect(parsed.text?.trim()).toBe('Thanks!');
    // Signed with the domain's own key.
    expect(mail.raw).toMatch(new RegExp(`DKIM-Signature:[^]*d=${domain.replace(/\./g, '\\.')}`));

    const status = await stack.api.call('GET', `/api/v1/emails/${id}`, { key: apiKey });
    expect(status.body).toMatchObject({
      id,
      status: 'sent',
      channel: 'email',
      to: 'ann@example.org',
      toAddresses: ['ann@example.org', '"Doe, John" <john@example.org>'],
      from: `Acme <hello@${domain}>`,
      subject: 'Your order',
      provider: 'smtp',
      kind: 'transactional',
      engagement: { opensHuman: 0, clicks: 0, bounced: false },
      events: [{ type: 'sent', classification: null }],
    });
  });

  it('200 duplicate with the first id for a repeated key, flagging a different body', async () => {
    const { apiKey, domain } = await sender();
    const body = { from: `a@${domain}`, to: 'x@example.org', subject: 'S', text: 'T', idempotencyKey: idempotencyKey() };
    const first = await stack.api.call('POST', '/api/v1/emails', { key: apiKey, body });
    const again = await stack.api.call('POST', '/api/v1/emails', { key: apiKey, body });
    const changed = await stack.api.call('POST', '/api/v1/emails', { key: apiKey, body: { ...body, subject: 'Other' } });
    const id = (first.body as { id: string }).id;
    expect(again).toMatchObject({ status: 200, body: { status: 'duplicate', idempotencyKey: body.idempotencyKey, id } });
    expect(again.body).not.toHaveProperty('bodyMismatch');
    expect(changed).toMatchObject({ status: 200, body: { status: 'duplicate', id, bodyMismatch: true } });
  });

  it('50 concurrent requests with one key store one message and use the quota once', async () => {
    const { apiKey, workspaceId, domain } = await sender();
    const body = { from: `a@${domain}`, to: 'x@example.org, y@example.org', subject: 'S', text: 'T', idempotencyKey: idempotencyKey() };
    const responses = await Promise.all(Array.from({ length: 50 }, () => stack.api.call('POST', '/api/v1/emails', { key: apiKey, body })));
    expect(responses.filter((r) => r.status === 202)).toHaveLength(1);
    expect(responses.filter((r) => r.status === 200)).toHaveLength(49);
    expect(new Set(responses.map((r) => (r.body as { id: string }).id)).size).toBe(1);
    const rows = await stack.api.db.query('SELECT id FROM messages WHERE workspace_id = $1', { bind: [workspaceId], type: 'SELECT' as never });
    expect(rows).toHaveLength(1);
    const usage = await stack.api.call('GET', '/api/v1/usage', { key: apiKey });
    expect(usage.body).toMatchObject({ messages: { used: 2 } });
  });

  it('422 validation with the flattened body; a refused request does not consume its key', async () => {
    const { apiKey, domain } = await sender();
    const key = idempotencyKey();
    const invalid = await stack.api.call('POST', '/api/v1/emails', { key: apiKey, body: { from: `a@${domain}`, to: 'not-an-address', subject: 'S', text: 'T', idempotencyKey: key } });
    expect(invalid).toMatchObject({ status: 422, body: { error: { formErrors: [], fieldErrors: { to: [expect.stringContaining('not a valid')] } } } });
    const short = await stack.api.call('POST', '/api/v1/emails', { key: apiKey, body: { from: `a@${domain}`, to: 'x@example.org', subject: 'S', text: 'T', idempotencyKey: 'short' } });
    expect(short).toMatchObject({ status: 422, body: { error: { fieldErrors: { idempotencyKey: [expect.any(String)] } } } });
    const injected = await stack.api.call('POST', '/api/v1/emails', { key: apiKey, body: { from: `a@${domain}`, to: 'x@example.org', subject: 'Hi\r\nBcc: evil@example.org', text: 'T', idempotencyKey: idempotencyKey() } });
    expect(injected.status).toBe(422);
    const valid = await stack.api.call('POST', '/api/v1/emails', { key: apiKey, body: { from: `a@${domain}`, to: 'x@example.org', subject: 'S', text: 'T', idempotencyKey: key } });
    expect(valid.status).toBe(202);
  });

  it('422 too_many_recipients above 50 across to, cc and bcc', async () => {
    const { apiKey, domain } = await sender();
    const addresses = (prefix: string, n: number) => Array.from({ length: n }, (_, i) => `${prefix}${i}@example.org`);
    const response = await stack.api.call('POST', '/api/v1/emails', {
      key: apiKey,
      body: { from: `a@${domain}`, to: addresses('t', 30), cc: addresses('c', 11), bcc: addresses('b', 10), subject: 'S', text: 'T', idempotencyKey: idempotencyKey() },
    });
    expect(response).toMatchObject({ status: 422, body: { error: 'too_many_recipients' } });
  });

  it('403 domain_not_verified for a sender domain the workspace has not verified', async () => {
    const { apiKey } = await sender();
    const response = await stack.api.call('POST', '/api/v1/emails', {
      key: apiKey,
      body: { from: 'a@unverified.example.com', to: 'x@example.org', subject: 'S', text: 'T', idempotencyKey: idempotencyKey() },
    });
    expect(response).toMatchObject({ status: 403, body: { error: 'domain_not_verified' } });
  });

  it('402 quota_exceeded with the quota body when the plan is used up', async () => {
    const { apiKey, workspaceId, domain } = await sender({ plan: 'free' });
    await reserveQuota(stack.api.db, workspaceId, PLANS.free, usagePeriodAt(new Date()), 2_999, { channel: 'email', kind: 'transactional' });
    const response = await stack.api.call('POST', '/api/v1/emails', {
      key: apiKey,
      body: { from: `a@${domain}`, to: 'x@example.org, y@example.org', subject: 'S', text: 'T', idempotencyKey: idempotencyKey() },
    });
    expect(response).toMatchObject({
      status: 402,
      body: { error: 'quota_exceeded', message: expect.any(String), resource: 'messages', limit: 3_000, used: 2_999, remaining: 1, plan: 'free' },
    });
  });

  it('suppressed copies are dropped and reported; 409 only when no to recipient remains', async () => {
    const { apiKey, workspaceId, domain } = await sender();
    await suppressAddresses(stack.api.db, workspaceId, 'email', ['gone@example.org', 'cc-gone@example.org'], 'hard_bounce');
    const partial = await stack.api.call('POST', '/api/v1/emails', {
      key: apiKey,
      body: { from: `a@${domain}`, to: 'gone@example.org, here@example.org', cc: 'cc-gone@example.org', subject: 'S', text: 'T', idempotencyKey: idempotencyKey() },
    });
    expect(partial).toMatchObject({
      status: 202,
      body: { droppedRecipients: [{ address: 'gone@example.org', reason: 'hard_bounce' }, { address: 'cc-gone@example.org', reason: 'hard_bounce' }] },
    });
    const none = await stack.api.call('POST', '/api/v1/emails', {
      key: apiKey,
      body: { from: `a@${domain}`, to: 'gone@example.org', cc: 'here@example.org', subject: 'S', text: 'T', idempotencyKey: idempotencyKey() },
    });
    expect(none).toMatchObject({ status: 409, body: { error: 'suppressed', message: expect.stringContaining('hard_bounce') } });
  });

  it('a text-only email goes out as a single text/plain part; a bare sender gets the domain\'s default name', async () => {
    const { apiKey, workspaceId, domain } = await sender({ defaultFromName: 'Acme Support' });
    const response = await stack.api.call('POST', '/api/v1/emails', {
      key: apiKey,
      body: { from: `help@${domain}`, to: 'text-only@example.org', subject: 'Plain', text: 'See https://example.org/a?b=1 as written', idempotencyKey: idempotencyKey() },
    });
    await stack.waitForStatus(workspaceId, (response.body as { id: string }).id, ['sent']);
    const parsed = await simpleParser(receivedBy('text-only@example.org')[0].raw);
    expect(parsed.html).toBe(false);
    expect(parsed.text?.trim()).toBe('See https://example.org/a?b=1 as written');
    expect(parsed.from).toMatchObject({ value: [{ name: 'Acme Support', address: `help@${domain}` }] });
  });

  it('422 template_not_found for an unknown template', async () => {
    const { apiKey, domain } = await sender();
    const response = await stack.api.call('POST', '/api/v1/emails', {
      key: apiKey,
      body: { from: `a@${domain}`, to: 'x@example.org', templateId: 'no-such-template', idempotencyKey: idempotencyKey() },
    });
    expect(response).toMatchObject({ status: 422, body: { error: 'template_not_found' } });
  });
});

describe('GET /emails', () => {
  it('lists the workspace\'s sends newest first with filters, total, limit and offset; another workspace sees none', async () => {
    const { apiKey, domain } = await sender();
    for (const to of ['l1@example.org', 'l2@example.org', 'l3@example.org']) {
      await stack.api.call('POST', '/api/v1/emails', { key: apiKey, body: { from: `a@${domain}`, to, subject: to, text: 'T', idempotencyKey: idempotencyKey() } });
    }
    const page = await stack.api.call('GET', '/api/v1/emails?limit=2', { key: apiKey });
    expect(page.body).toMatchObject({ total: 3, limit: 2, offset: 0, data: [{ to: 'l3@example.org' }, { to: 'l2@example.org' }] });
    const filtered = await stack.api.call('GET', '/api/v1/emails?to=L1@example.org', { key: apiKey });
    expect(filtered.body).toMatchObject({ total: 1, data: [{ subject: 'l1@example.org' }] });
    const other = await createTestWorkspace(stack.api);
    expect((await stack.api.call('GET', '/api/v1/emails', { key: other.apiKey })).body).toMatchObject({ total: 0, data: [] });
    const id = ((page.body as { data: Array<{ id: string }> }).data[0]).id;
    expect((await stack.api.call('GET', `/api/v1/emails/${id}`, { key: other.apiKey })).status).toBe(404);
  });
});
