import { Writable } from 'node:stream';
import { QueryTypes, type Sequelize } from 'sequelize';
import { createSequelize } from '../../db/sequelize';
import { type ApiHarness, startApi } from '../helpers/api-harness';
import { createIsolatedDatabase, type IsolatedDatabase } from '../helpers/isolated-database';
import { createTestWorkspace } from '../helpers/workspaces';

/** With DB_STATEMENT_TIMEOUT_MS small, a statement that runs past it is cancelled and the request answers 503. */
describe('statement timeout of the API', () => {
  let api: ApiHarness;
  let other: Sequelize;
  let database: IsolatedDatabase;
  const lines: string[] = [];
  beforeAll(async () => {
    // A database of its own: a test below locks a table, which would hold other files' requests meanwhile.
    database = await createIsolatedDatabase(process.env.DATABASE_URL ?? '');
    api = await startApi({ DATABASE_URL: database.url, DB_STATEMENT_TIMEOUT_MS: '300' }, {
      logStream: new Writable({
        write(chunk: Buffer, _encoding, done) {
          lines.push(chunk.toString());
          done();
        },
      }),
      extend: (router, edge) => {
        router.get('/test/slow-report', ...edge, async (_req, res) => {
          await api.db.query('SELECT pg_sleep(5)');
          res.json({ done: true });
        });
      },
    });
    other = createSequelize(api.config.DATABASE_URL);
  });
  afterAll(async () => {
    await other.close();
    await api.close();
    await database.drop();
  });

  it('a statement that runs past the timeout answers 503 service_unavailable, without the SQL', async () => {
    const { apiKey } = await createTestWorkspace(api);
    const started = Date.now();
    const response = await api.as(apiKey)('GET', '/test/slow-report');
    expect(response).toEqual(expect.objectContaining({ status: 503, body: { error: 'service_unavailable', message: expect.any(String) } }));
    expect(Date.now() - started).toBeLessThan(3_000);
    expect(JSON.stringify(response.body)).not.toContain('pg_sleep');
    expect(lines.join('')).toContain('statement cancelled at DB_STATEMENT_TIMEOUT_MS');
  });

  it('a list that waits past the timeout (its table locked by another session) answers 503, and the pool keeps serving', async () => {
    const { apiKey } = await createTestWorkspace(api);
    const list = () => api.as(apiKey)('GET', '/tags');
    expect((await list()).status).toBe(200);
    await other.transaction(async (transaction) => {
      await other.query('LOCK TABLE tags IN ACCESS EXCLUSIVE MODE', { transaction });
      expect(await list()).toMatchObject({ status: 503, body: { error: 'service_unavailable' } });
    });
    expect((await list()).status).toBe(200);
  });

  it('statements within the timeout are unaffected', async () => {
    const rows = await api.db.query<{ slept: string }>('SELECT pg_sleep(0.05)::text AS slept', { type: QueryTypes.SELECT });
    expect(rows).toHaveLength(1);
  });
});
