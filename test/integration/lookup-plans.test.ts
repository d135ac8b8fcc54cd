import { randomUUID } from 'node:crypto';
import { QueryTypes, type Sequelize } from 'sequelize';
import { loadConfig } from '../../core/config';
import { ACCEPT_LOOKUP_SQL } from '../../db/repositories/message-acceptance';
import { createSequelize } from '../../db/sequelize';
import { createIsolatedDatabase } from '../helpers/isolated-database';
import { createTestWorkspace } from '../helpers/workspaces';

/**
 * The send path's lookup must probe keys and addresses one by one, also for a workspace the planner's
 * statistics have not seen (a new sender, or one that just imported a list): estimated at one row, such a
 * workspace used to be read whole through a workspace-first index and filtered.
 */
let database: Awaited<ReturnType<typeof createIsolatedDatabase>>;
let db: Sequelize;
beforeAll(async () => {
  // A database of its own: the plans depend on the tables' statistics, which other test files change.
  database = await createIsolatedDatabase(loadConfig(process.env).DATABASE_URL);
  db = createSequelize(database.url);
});
afterAll(async () => {
  await db.close();
  await database.drop();
});

const seed = async (workspaceId: string, count: number) => {
  await db.query(
    `INSERT INTO message_keys (workspace_id, idempotency_key, message_id, request_hash)
     SELECT $1::uuid, $1::text || '-' || i, gen_random_uuid(), 'h' FROM generate_series(1, $2::int) AS i`,
    { bind: [workspaceId, count] },
  );
  await db.query(
    `INSERT INTO suppressions (workspace_id, channel, address, reason)
     SELECT $1::uuid, 'email', 'p' || i || '@' || $1::text || '.example.org', 'manual' FROM generate_series(1, $2::int) AS i`,
    { bind: [workspaceId, count] },
  );
};

interface PlanNode {
  'Node Type': string;
  'Index Name'?: string;
  'Rows Removed by Filter'?: number;
  'Rows Removed by Index Recheck'?: number;
  Plans?: PlanNode[];
}

const nodes = (node: PlanNode): PlanNode[] => [node, ...(node.Plans ?? []).flatMap(nodes)];

describe('the acceptance lookup', () => {
  it('probes message_keys and the suppression address index, never reading the workspace whole', async () => {
    // An established sender the statistics know, then a new one that sends (or imports) at once.
    const established = await createTestWorkspace(db);
    await seed(established.workspaceId, 20_000);
    await db.query('ANALYZE message_keys; ANALYZE suppressions');
    const { workspaceId } = await createTestWorkspace(db);
    await seed(workspaceId, 5_000);
    const keys = Array.from({ length: 100 }, () => `missing-${randomUUID()}`).concat(`${workspaceId}-7`);
    const addresses = Array.from({ length: 100 }, (_, i) => `someone${i}@example.org`).concat(`p7@${workspaceId}.example.org`);
    const [row] = await db.query<{ 'QUERY PLAN': Array<{ Plan: PlanNode }> }>(`EXPLAIN (ANALYZE, FORMAT JSON) ${ACCEPT_LOOKUP_SQL}`, {
      bind: [workspaceId, keys, addresses],
      type: QueryTypes.SELECT,
    });
    const plan = nodes(row["QUERY PLAN"][0].Plan);
    const indexes = plan.flatMap((node) => (node['Index Name'] ? [node['Index Name']] : []));
    expect(indexes).toEqual(expect.arrayContaining(['message_keys_pkey', 'suppressions_address_idx']));
    expect(plan.map((node) => node['Node Type'])).not.toContain('Seq Scan');
    const removed = plan.reduce((sum, node) => sum + (node['Rows Removed by Filter'] ?? 0) + (node['Rows Removed by Index Recheck'] ?? 0), 0);
    expect(removed).toBeLessThan(10);
  });
});
