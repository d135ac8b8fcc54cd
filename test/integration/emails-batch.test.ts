import { startEmailStack, type EmailStack } from '../helpers/email-stack';
import { createWorkspace } from '../helpers/factories';

let stack: EmailStack;
beforeAll(async () => {
  stack = await startEmailStack();
});
afterAll(() => stack.close());

describe('POST /emails/batch', () => {
  it('207: partial, aligned by index, an invalid item never stops the others; a retried batch sends nothing twice; one request for the rate limit', async () => {
    const { apiKey, workspaceId } = await createWorkspace(stack.api.db);
    const domain = await stack.verifiedDomain(workspaceId);
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
        { index: 1, status: 'failed', error: { code: 'validation_error' } },
        { index: 2, status: 'failed', error: { code: 'domain_not_verified' } },
        { index: 3, status: 'failed', error: { code: 'validation_error' } },
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

  it('more than 100 emails, or none, is refused as a whole with 422', async () => {
    const { apiKey } = await createWorkspace(stack.api.db);
    const item = { from: 'a@example.com', to: 'x@example.org', subject: 'S', text: 'T', idempotencyKey: 'k'.repeat(10) };
    expect((await stack.api.call('POST', '/api/v1/emails/batch', { key: apiKey, body: { emails: Array(101).fill(item) } })).status).toBe(422);
    expect((await stack.api.call('POST', '/api/v1/emails/batch', { key: apiKey, body: { emails: [] } })).status).toBe(422);
  });
});
