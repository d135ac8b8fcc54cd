import { QueryTypes, type Sequelize } from 'sequelize';
import { createSequelize } from '../../db/sequelize';
import { type ApiHarness, startApi } from '../helpers/api-harness';
import { createIsolatedDatabase, type IsolatedDatabase } from '../helpers/isolated-database';
import { addTestDomain, createTestWorkspace, type TestWorkspace } from '../helpers/workspaces';
import { type Answer, createFlooder, flood, type Flooder, seedContacts, timedCaller } from '../helpers/noisy-neighbour';

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
/** About six seconds of a well-behaved client's requests (below). */
const VICTIM_REQUESTS = 40;

describe('noisy neighbours: one workspace floods previews and estimates', () => {
  let api: ApiHarness;
  let flooder: Flooder;
  let victim: TestWorkspace & { domain: string };

  beforeAll(async () => {
    // The defaults, as a deployment has them (the test run lifts the workspace budget for other files).
    api = await startApi({ RATE_LIMIT_PER_SECOND: '10', WORKSPACE_RATE_LIMIT_PER_SECOND: '100', RATE_COST_HEAVY: '20', WORKSPACE_HEAVY_CONCURRENCY: '2' });
    flooder = await createFlooder(api.db, api.config.MASTER_KEY, api.as, { contacts: 20_000, keys: 8, conditions: 40 });
    const workspace = await createTestWorkspace(api, { plan: 'pro', name: 'Victim' });
    await seedContacts(api.db, workspace.workspaceId, 200);
    victim = { ...workspace, domain: (await addTestDomain(api, workspace.workspaceId)).domain };
  });
  afterAll(() => api.close());

  it("another workspace's reads and sends keep working (no 5xx, no 429), and the flood is refused with 429 and Retry-After", async () => {
    const call = timedCaller(api.url);
    let stopped = false;
    const floodStarted = performance.now();
    const flooding = flood(flooder, call, () => stopped);
    await sleep(500);
    // A fixed number of requests, not a time window: on a loaded machine each answer may come slower, and what
    // this proves is that every one of them is served, while the flood goes on around them.
    const victimAnswers: Answer[] = [];
    for (let i = 0; i < VICTIM_REQUESTS; i += 1) {
      victimAnswers.push(
        i % 2 === 0
          ? await call(victim.apiKey, 'GET', '/contacts?limit=10')
          : await call(victim.apiKey, 'POST', '/emails', { from: `hi@${victim.domain}`, to: 'ann@example.org', subject: 'Hi', html: '<p>Hi</p>', idempotencyKey: `victim-${i}-${victim.workspaceId}` }),
      );
      // About 7 requests a second: within the victim's own key limit, as a well-behaved client stays.
      await sleep(140);
    }
    stopped = true;
    const floodAnswers = await flooding;
    const floodSeconds = (performance.now() - floodStarted) / 1000;

    expect(victimAnswers).toHaveLength(VICTIM_REQUESTS);
    expect(victimAnswers.filter((answer) => answer.status !== 200 && answer.status !== 202)).toEqual([]);

    const refused = floodAnswers.filter((answer) => answer.status === 429);
    expect(floodAnswers.filter((answer) => answer.status !== 200 && answer.status !== 429)).toEqual([]);
    expect(floodAnswers.some((answer) => answer.status === 200)).toBe(true);
    expect(refused.length).toBeGreaterThan(0);
    // The workspace's budget, not its 8 keys' 80 requests a second: 100 points a second at 20 a preview or estimate.
    const served = floodAnswers.filter((answer) => answer.status === 200).length;
    expect(served).toBeLessThanOrEqual(Math.ceil(floodSeconds + 1) * 5);
    for (const answer of refused) {
      expect(answer.retryAfter).toMatch(/^[1-9]\d*$/);
      expect(answer.body).toEqual({ error: 'rate_limit_exceeded', limit: expect.any(Number), retryAfter: Number(answer.retryAfter) });
    }
  });
});

describe('audience queries run on their own pool', () => {
  let api: ApiHarness;
  let locker: Sequelize;
  let database: IsolatedDatabase;

  beforeAll(async () => {
    // A database of its own: the test locks a table for seconds, which would hold other files' requests, and
    // counts the backends its lock blocks, which would count theirs.
    database = await createIsolatedDatabase(process.env.DATABASE_URL ?? '');
    api = await startApi({ DATABASE_URL: database.url, AUDIENCE_POOL_SIZE: '1', AUDIENCE_STATEMENT_TIMEOUT_MS: '1000', RATE_LIMIT_PER_SECOND: '1000' });
    locker = createSequelize(api.config.DATABASE_URL);
  });
  afterAll(async () => {
    await locker.close();
    await api.close();
    await database.drop();
  });

  /** Backends blocked by the test's lock: the audience statements stuck behind it. */
  async function blockedBy(lockHolder: number): Promise<number> {
    const [row] = await locker.query<{ waiting: number }>('SELECT count(*)::int AS waiting FROM pg_stat_activity WHERE $1::int = ANY (pg_blocking_pids(pid))', {
      bind: [lockHolder],
      type: QueryTypes.SELECT,
    });
    return row.waiting;
  }

  it('previews stuck in the database hold at most AUDIENCE_POOL_SIZE connections, are cancelled at the audience timeout, and reads keep answering', async () => {
    const workspaces = await Promise.all([1, 2, 3].map(() => createTestWorkspace(api)));
    const tagged = await Promise.all(
      workspaces.map(async (workspace) => {
        const tag = await api.as(workspace.apiKey)('POST', '/tags', { name: 'vip' });
        return { key: workspace.apiKey, tagId: (tag.body as { id: string }).id };
      }),
    );
    const reader = await createTestWorkspace(api);
    await seedContacts(api.db, reader.workspaceId, 20);

    let answers: Array<{ status: number }> = [];
    const samples: number[] = [];
    const readStatuses: number[] = [];
    await locker.transaction(async (transaction) => {
      // Every tag condition reads contact_tags; a plain contact list does not.
      await locker.query('LOCK TABLE contact_tags IN ACCESS EXCLUSIVE MODE', { transaction });
      const [{ pid: lockHolder }] = await locker.query<{ pid: number }>('SELECT pg_backend_pid() AS pid', { transaction, type: QueryTypes.SELECT });
      const previews = Promise.all(
        tagged.map(({ key, tagId }) => api.as(key)('POST', '/segments/preview', { definition: { operator: 'and', rules: [{ type: 'tag', operator: 'has', tagId }] } })),
      );
      for (let i = 0; i < 8; i += 1) {
        await sleep(200);
        samples.push(await blockedBy(lockHolder));
        readStatuses.push((await api.as(reader.apiKey)('GET', '/contacts?limit=10')).status);
      }
      answers = await previews;
    });

    expect(Math.max(...samples)).toBe(1);
    expect(readStatuses.every((status) => status === 200)).toBe(true);
    // Each cancelled at AUDIENCE_STATEMENT_TIMEOUT_MS: "try again", never a hang nor a 500.
    for (const answer of answers) expect(answer).toMatchObject({ status: 503, body: { error: 'service_unavailable' } });
  });
});
