import { randomUUID } from 'node:crypto';
import { QueryTypes } from 'sequelize';
import { PLANS, usagePeriodAt } from '../../core/plans';
import { reserveQuota, usedInPeriod } from '../../db/repositories/usage';
import { startEmailStack, type EmailStack } from '../helpers/email-stack';
import { createTestWorkspace } from '../helpers/workspaces';

let stack: EmailStack;
beforeAll(async () => {
  stack = await startEmailStack();
});
afterAll(() => stack.close());

describe('POST /emails/batch', () => {
  it('207: partial, aligned by index, an invalid item never stops the others; a retried batch sends nothing twice; one request for the rate limit', async () => {
    const { apiKey, workspaceId, domain } = await createTestWorkspace(stack.api, { domain: true });
    const run = `${Date.now()}`;
    const emails = [
      { from: `a@${domain}`, to: 'b1@example.org', subject: 'One', text: 'T', idempotencyKey: `${run}-one` },
      { from: `a@${domain}`, to: 'not an address', subject: 'Two', text: 'T', idempotencyKey: `${run}-two` },
      { from: 'a@unverified.example.com', to: 'b3@example.org', subject: 'Three', text: 'T', idempotencyKey: `${run}-three` },
      { to: 'b4@example.org', subject: 'Four' },
      { from: `a@${domain}`, to: 'b5@example.org', subject: 'Five', text: 'T', idempotencyKey: `${run}-five` },
    ];
    const first = await stack.api.call('POST', '/api/v1/emails/batch', { key: apiKey, body: { emails } });
    expect(first.status).toBe(207);
    expect(first.headers.get('ratelimit-remaining')).toBe('9');
    expect(first.body).toMatchObject({
      accepted: 2,
      failed: 3,
      results: [
        { index: 0, status: 'accepted', id: expect.any(String), duplicate: false },
        // A refused item names its fields, as the single send's fieldErrors do.
        { index: 1, status: 'failed', error: { code: 'validation_error', message: expect.stringMatching(/^to: /) } },
        { index: 2, status: 'failed', error: { code: 'domain_not_verified' } },
        { index: 3, status: 'failed', error: { code: 'validation_error', message: expect.stringMatching(/from: .*idempotencyKey: /s) } },
        { index: 4, status: 'accepted', id: expect.any(String), duplicate: false },
      ],
    });

    const retry = await stack.api.call('POST', '/api/v1/emails/batch', { key: apiKey, body: { emails } });
    expect(retry.headers.get('ratelimit-remaining')).toBe('8');
    const results = (first.body as { results: Array<{ id?: string }> }).results;
    expect(retry.body).toMatchObject({
      accepted: 2,
      results: [
        { index: 0, status: 'accepted', id: results[0].id, duplicate: true },
        { index: 1, status: 'failed' },
        { index: 2, status: 'failed' },
        { index: 3, status: 'failed' },
        { index: 4, status: 'accepted', id: results[4].id, duplicate: true },
      ],
    });
    await stack.waitForStatus(workspaceId, results[0].id as string, ['sent']);
    await stack.waitForStatus(workspaceId, results[4].id as string, ['sent']);
    expect(stack.sink.received.filter((mail) => mail.recipients.includes('b1@example.org'))).toHaveLength(1);
  });

  it('a key repeated within a batch is one send; the quota takes items in order until it runs out, and only those are stored', async () => {
    const { apiKey, workspaceId, domain } = await createTestWorkspace(stack.api, { domain: true });
    // The free plan's 3,000 minus 2,996: four units left.
    await reserveQuota(stack.api.db, workspaceId, PLANS.free, usagePeriodAt(new Date()), 2_996, { channel: 'email', kind: 'transactional' });
    const run = randomUUID();
    const email = (key: string, to: string | string[]) => ({ from: `a@${domain}`, to, subject: 'Q', text: 'T', idempotencyKey: `${run}-${key}` });
    const emails = [
      email('one', 'q1@example.org'),
      email('one', 'q1@example.org'),
      email('two', ['q2@example.org', 'q3@example.org']),
      email('three', ['q4@example.org', 'q5@example.org']),
      email('four', 'q6@example.org'),
    ];
    const response = await stack.api.call('POST', '/api/v1/emails/batch', { key: apiKey, body: { emails } });
    const results = (response.body as { results: Array<{ id?: string }> }).results;
    expect(response.body).toMatchObject({
      accepted: 4,
      failed: 1,
      results: [
        { index: 0, status: 'accepted', duplicate: false },
        { index: 1, status: 'accepted', id: results[0].id, duplicate: true },
        { index: 2, status: 'accepted', duplicate: false },
        { index: 3, status: 'failed', error: { code: 'quota_exceeded' } },
        { index: 4, status: 'accepted', duplicate: false },
      ],
    });
    expect(await usedInPeriod(stack.api.db, workspaceId, usagePeriodAt(new Date()))).toBe(3_000);
    const [{ count }] = await stack.api.db.query<{ count: string }>('SELECT count(*) AS count FROM messages WHERE workspace_id = $1', {
      bind: [workspaceId],
      type: QueryTypes.SELECT,
    });
    expect(Number(count)).toBe(3);
  });

  it('concurrent batches sharing keys store each key once, and answer every item with its one id', async () => {
    const { apiKey, workspaceId, domain } = await createTestWorkspace(stack.api, { plan: 'pro', domain: true });
    const run = randomUUID();
    const emails = Array.from({ length: 20 }, (_, i) => ({ from: `a@${domain}`, to: `c${i}@example.org`, subject: 'C', text: 'T', idempotencyKey: `${run}-${i}` }));
    const responses = await Promise.all(Array.from({ length: 6 }, () => stack.api.call('POST', '/api/v1/emails/batch', { key: apiKey, body: { emails } })));
    const rows = await stack.api.db.query<{ id: string; idempotency_key: string }>('SELECT id, idempotency_key FROM messages WHERE workspace_id = $1', {
      bind: [workspaceId],
      type: QueryTypes.SELECT,
    });
    expect(rows).toHaveLength(20);
    const idOf = new Map(rows.map((row) => [row.idempotency_key, row.id]));
    for (const response of responses) {
      const body = response.body as { accepted: number; results: Array<{ id: string }> };
      expect(body.accepted).toBe(20);
      expect(body.results.map((result) => result.id)).toEqual(emails.map((email) => idOf.get(email.idempotencyKey)));
    }
    const fresh = responses.flatMap((response) => (response.body as { results: Array<{ duplicate: boolean }> }).results).filter((result) => !result.duplicate);
    expect(fresh).toHaveLength(20);
    expect(await usedInPeriod(stack.api.db, workspaceId, usagePeriodAt(new Date()))).toBe(20);
  });

  it('an item\'s bad attachment fails as validation_error with its reason, and the document admits the spec\'s item codes only', async () => {
    const { apiKey, domain } = await createTestWorkspace(stack.api, { domain: true });
    const run = `${Date.now()}`;
    // A signed upload never uploaded: on a single send the attachment files answer attachment_rejected (not_uploaded).
    const upload = await stack.api.call('POST', '/api/v1/attachments', { key: apiKey, body: { filename: 'r.pdf', contentType: 'application/pdf', size: 10 } });
    const pendingId = ((upload.body as { attachment?: { id: string }; id?: string }).attachment?.id ?? (upload.body as { id: string }).id) as string;
    const base = { from: `a@${domain}`, to: 'b@example.org', subject: 'S', text: 'T' };
    const emails = [
      { ...base, idempotencyKey: `${run}-exe`, attachments: [{ filename: 'run.exe', content: Buffer.from('MZ').toString('base64') }] },
      { ...base, idempotencyKey: `${run}-pending`, attachments: [{ id: pendingId }] },
      { ...base, idempotencyKey: `${run}-unknown`, attachments: [{ id: randomUUID() }] },
    ];
    const response = await stack.api.call('POST', '/api/v1/emails/batch', { key: apiKey, body: { emails } });
    expect(response).toMatchObject({
      status: 207,
      body: {
        accepted: 0,
        failed: 3,
        results: [
          { index: 0, status: 'failed', error: { code: 'validation_error', message: expect.stringMatching(/attachments.*exe/s) } },
          { index: 1, status: 'failed', error: { code: 'validation_error', message: expect.stringMatching(/uploaded/) } },
          { index: 2, status: 'failed', error: { code: 'validation_error', message: expect.stringMatching(/no such attachment/) } },
        ],
      },
    });
    const document = (await stack.api.call('GET', '/api/v1/openapi.json')).body as {
      components: { schemas: { BatchItemResult: { properties: { error: { properties: { code: { enum?: string[] } } } } } } };
    };
    expect(document.components.schemas.BatchItemResult.properties.error.properties.code.enum).toEqual([
      'validation_error',
      'domain_not_verified',
      'suppressed',
      'template_not_found',
      'quota_exceeded',
      'too_many_recipients',
    ]);
  });

  it('more than 100 emails, or none, is refused as a whole with 422', async () => {
    const { apiKey } = await createTestWorkspace(stack.api);
    const item = { from: 'a@example.com', to: 'x@example.org', subject: 'S', text: 'T', idempotencyKey: 'k'.repeat(10) };
    expect((await stack.api.call('POST', '/api/v1/emails/batch', { key: apiKey, body: { emails: Array(101).fill(item) } })).status).toBe(422);
    expect((await stack.api.call('POST', '/api/v1/emails/batch', { key: apiKey, body: { emails: [] } })).status).toBe(422);
  });
});
