import { Writable } from 'node:stream';
import type { Sequelize } from 'sequelize';
import { preparedQuery } from '../../db/prepared';
import { createSequelize } from '../../db/sequelize';
import { type ApiHarness, startApi } from '../helpers/api-harness';
import { createTestWorkspace } from '../helpers/workspaces';
import { freePort } from '../helpers/free-port';

/**
 * While PostgreSQL is down or restarting (the fault suite's postgres-crash scenario: 24 sends answered 500),
 * the API answers 503 service_unavailable, so clients retry (a send with its idempotency key, safely),
 * rather than 500, which says the request itself broke something.
 */
describe('the API while its database cannot be reached', () => {
  let api: ApiHarness;
  let other: Sequelize;
  let unreachable: Sequelize;
  const lines: string[] = [];
  beforeAll(async () => {
    // Nothing listens there: every connection is refused, as while the postmaster is down.
    unreachable = createSequelize(`postgres://messaging@127.0.0.1:${await freePort()}/messaging`);
    api = await startApi({}, {
      logStream: new Writable({
        write(chunk: Buffer, _encoding, done) {
          lines.push(chunk.toString());
          done();
        },
      }),
      extend: (router, edge) => {
        router.get('/test/refused', ...edge, async (_req, res) => {
          await unreachable.query('SELECT 1');
          res.json({ done: true });
        });
        router.get('/test/terminated', ...edge, async (_req, res) => {
          await api.db.query("SELECT pg_sleep(10) AS \"database-outage-probe\"");
          res.json({ done: true });
        });
        // The send path's named statements run on the pool's own client: their errors are pg's, not Sequelize's.
        router.get('/test/terminated-named', ...edge, async (_req, res) => {
          await preparedQuery(api.db, 'database-outage-probe', 'SELECT pg_sleep(10) AS "database-outage-probe"', []);
          res.json({ done: true });
        });
      },
    });
    other = createSequelize(api.config.DATABASE_URL);
  });
  afterAll(async () => {
    await Promise.all([other.close(), unreachable.close()]);
    await api.close();
  });

  it('a refused connection answers 503 service_unavailable, and the cause is logged as an outage', async () => {
    const { apiKey } = await createTestWorkspace(api);
    const response = await api.as(apiKey)('GET', '/test/refused');
    expect(response).toMatchObject({ status: 503, body: { error: 'service_unavailable', message: expect.any(String) } });
    expect(JSON.stringify(response.body)).not.toContain('127.0.0.1');
    expect(lines.join('')).toContain('database unavailable');
  });

  async function terminatedMidStatement(path: string) {
    const { apiKey } = await createTestWorkspace(api);
    const pending = api.as(apiKey)('GET', path);
    for (let terminated = 0; terminated === 0; await new Promise((done) => setTimeout(done, 50))) {
      const [rows] = await other.query(
        `SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE query LIKE '%"database-outage-probe"%' AND pid <> pg_backend_pid()`,
      );
      terminated = rows.length;
    }
    return pending;
  }

  it('a connection the server ends mid-statement (a shutdown or crash, SQLSTATE 57P01) answers 503', async () => {
    expect(await terminatedMidStatement('/test/terminated')).toMatchObject({ status: 503, body: { error: 'service_unavailable' } });
  });

  it('the same during a named statement of the send path (a pg error, not a Sequelize one) answers 503, not 500', async () => {
    expect(await terminatedMidStatement('/test/terminated-named')).toMatchObject({ status: 503, body: { error: 'service_unavailable' } });
  });
});
