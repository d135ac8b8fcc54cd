import { QueryTypes } from 'sequelize';
import { startEmailStack, type EmailStack } from '../helpers/email-stack';
import { createWorkspace } from '../helpers/factories';
import { createIsolatedDatabase } from '../helpers/isolated-database';

// The default dispatch: the API only stores; the worker's outbox loop starts every send workflow.
let stack: EmailStack;
let database: Awaited<ReturnType<typeof createIsolatedDatabase>>;
beforeAll(async () => {
  database = await createIsolatedDatabase(process.env.DATABASE_URL ?? '');
  stack = await startEmailStack({ outbox: true, overrides: { DATABASE_URL: database.url, SEND_DISPATCH: 'outbox' } });
});
afterAll(async () => {
  await stack.close();
  await database.drop();
});

describe('SEND_DISPATCH=outbox', () => {
  it('single and batch sends are started by the outbox loop, sent once each, and marked dispatched', async () => {
    const { apiKey, workspaceId } = await createWorkspace(stack.api.db);
    const domain = await stack.verifiedDomain(workspaceId);
    const email = (i: number) => ({ from: `a@${domain}`, to: `outbox${i}@example.org`, subject: `Outbox ${i}`, text: 'T', idempotencyKey: `outbox-${workspaceId}-${i}` });
    const single = await stack.api.call('POST', '/api/v1/emails', { key: apiKey, body: email(0) });
    expect(single.status).toBe(202);
    const batch = await stack.api.call('POST', '/api/v1/emails/batch', { key: apiKey, body: { emails: [email(1), email(2), email(3)] } });
    const ids = [(single.body as { id: string }).id, ...(batch.body as { results: Array<{ id: string }> }).results.map((result) => result.id)];
    for (const id of ids) await stack.waitForStatus(workspaceId, id, ['sent']);

    for (const i of [0, 1, 2, 3]) {
      expect(stack.sink.received.filter((mail) => mail.recipients.includes(`outbox${i}@example.org`))).toHaveLength(1);
    }
    const undispatched = await stack.api.db.query('SELECT id FROM messages WHERE workspace_id = $1 AND dispatched_at IS NULL', {
      bind: [workspaceId],
      type: QueryTypes.SELECT,
    });
    expect(undispatched).toEqual([]);
  });
});
