import { randomUUID } from 'node:crypto';
import type { Sequelize } from 'sequelize';
import { listMessages } from '../../db/repositories/messages';
import { createSequelize } from '../../db/sequelize';
import { type ApiHarness, startApi } from '../helpers/api-harness';
import { createTestWorkspace } from '../helpers/workspaces';

describe('GET /emails reads only what a list row shows', () => {
  let api: ApiHarness;
  let db: Sequelize;
  const statements: string[] = [];
  beforeAll(async () => {
    api = await startApi();
    db = createSequelize(api.config.DATABASE_URL, { log: (sql) => statements.push(sql) });
  });
  afterAll(async () => {
    await db.close();
    await api.close();
  });

  it('a send with a large body is listed without its content being read', async () => {
    const { apiKey, workspaceId, domain } = await createTestWorkspace(api, { domain: true });
    const html = `<p>${'Long newsletter. '.repeat(30_000)}</p>`;
    const sent = await api.as(apiKey)('POST', '/emails', {
      from: `News <news@${domain}>`,
      to: 'Ann <ann@example.org>',
      subject: 'Monthly',
      html,
      idempotencyKey: `list-${randomUUID()}`,
    });
    expect(sent.status).toBe(202);

    statements.length = 0;
    const { rows, total } = await listMessages(db, workspaceId, { limit: 10, offset: 0 });
    expect(total).toBe(1);
    expect(Object.keys(rows[0]).sort()).toEqual(
      ['campaignId', 'contactId', 'createdAt', 'engagement', 'enrollmentId', 'fromAddress', 'id', 'kind', 'status', 'subject', 'to'],
    );
    const select = statements.find((sql) => sql.includes('ORDER BY created_at DESC'));
    expect(select).toBeDefined();
    expect(select).not.toMatch(/SELECT \*|\bcontent\b|\brendered\b/);

    const listed = await api.as(apiKey)('GET', '/emails');
    expect(listed.body).toMatchObject({
      total: 1,
      data: [{ id: (sent.body as { id: string }).id, status: 'queued', to: 'Ann <ann@example.org>', subject: 'Monthly', kind: 'transactional' }],
    });
  });
});
