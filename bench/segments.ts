import { QueryTypes, type Sequelize } from 'sequelize';
import { parseAudienceRules } from '../core/audience-rules';
import { fieldsByKey } from '../core/custom-fields';
import { inAudienceSession } from '../db/audience-session';
import { listCustomFields } from '../db/repositories/custom-fields';
import { audienceQueries } from '../db/repositories/segments';
import { startApi } from '../test/helpers/api-harness';
import { createTestWorkspace } from '../test/helpers/workspaces';
import { ms, summary } from './stats';

/**
 * Segment preview on a million contacts. Seeds one fresh workspace in SQL (generate_series, one
 * statement per table), then times POST /segments/preview end to end over HTTP for a rule on an
 * indexed attribute, a tag, a list and a nested and/or tree of five conditions. Targets: p95 under
 * 500 ms for the single rules and under 2 s for the tree. Run with `npm run bench -- segments`.
 * BENCH_CONTACTS sizes the workspace, BENCH_RUNS the timed previews per rule, BENCH_EXPLAIN=1 prints
 * each count's plan, BENCH_KEEP=1 leaves the workspace in place.
 */
const CONTACTS = Number(process.env.BENCH_CONTACTS ?? 1_000_000);
const RUNS = Number(process.env.BENCH_RUNS ?? 20);
const WARMUP = 2;

async function timed<T>(label: string, work: () => Promise<T>): Promise<T> {
  const started = process.hrtime.bigint();
  const result = await work();
  console.log(`  ${label.padEnd(44)} ${(Number(process.hrtime.bigint() - started) / 1e9).toFixed(1)} s`);
  return result;
}

async function seed(db: Sequelize, workspaceId: string, ids: { tags: string[]; lists: string[] }): Promise<void> {
  const run = (sql: string, bind: unknown[] = [workspaceId]) => db.query(sql, { bind });
  // Plans: 50% free, 30% pro, 10% team, 10% enterprise; score uniform 0..99; created over ~3 years.
  await timed(`contacts (${CONTACTS.toLocaleString('en')})`, () =>
    run(
      `INSERT INTO contacts (id, workspace_id, attributes, created_at, updated_at)
       SELECT gen_random_uuid(), $1,
         jsonb_build_object(
           'firstName', 'First' || g, 'lastName', 'Last' || (g % 1000),
           'plan', (ARRAY['free','free','free','free','free','pro','pro','pro','team','enterprise'])[1 + (g * 7) % 10],
           'score', (g * 37) % 100,
           'city', (ARRAY['Paris','Berlin','London','Madrid','Rome'])[1 + g % 5]),
         now() - ((g * 13) % 1000) * interval '1 day' - (g % 86400) * interval '1 second', now()
       FROM generate_series(1, $2::int) AS g`,
      [workspaceId, CONTACTS],
    ),
  );
  await timed('email identities (one each)', () =>
    run(
      `INSERT INTO contact_identities (workspace_id, channel, address, contact_id, consent, verified, is_primary)
       SELECT $1, 'email', 'user' || n || '@example.com', id, (ARRAY['opted_in','opted_in','unknown','opted_out'])[1 + n % 4], n % 3 = 0, true
       FROM (SELECT id, row_number() OVER () AS n FROM contacts WHERE workspace_id = $1) numbered`,
    ),
  );
  const members = (table: string, column: string, id: string, share: number) =>
    run(
      `INSERT INTO ${table} (workspace_id, ${column}, contact_id)
       SELECT $1, $2::uuid, id FROM contacts WHERE workspace_id = $1 AND random() < $3::float8`,
      [workspaceId, id, share],
    );
  await timed('tags: vip 10%, rare 1%', async () => {
    await members('contact_tags', 'tag_id', ids.tags[0], 0.1);
    await members('contact_tags', 'tag_id', ids.tags[1], 0.01);
  });
  await timed('lists: newsletter 20%, beta 5%', async () => {
    await members('list_members', 'list_id', ids.lists[0], 0.2);
    await members('list_members', 'list_id', ids.lists[1], 0.05);
  });
  await timed('events: purchase, 1-3 each for 30% (90 days)', () =>
    run(
      `INSERT INTO contact_events (id, workspace_id, contact_id, name, occurred_at)
       SELECT gen_random_uuid(), $1, c.id, 'purchase', now() - random() * interval '90 days'
       -- 1 to 3 events, from the contact's random id (a LATERAL random() would be evaluated only once).
       FROM contacts c CROSS JOIN LATERAL generate_series(1, 1 + (c.id::text < '5')::int + (c.id::text < '2')::int) AS k
       WHERE c.workspace_id = $1 AND random() < 0.3`,
    ),
  );
  // The GIN index on attributes comes with the schema; an expression index is what an operator adds
  // for a key filtered by range often. Built before ANALYZE, which gathers statistics on its expression.
  await timed('index (workspace_id, (attributes -> \'score\'))', () =>
    db.query(`CREATE INDEX IF NOT EXISTS contacts_score_idx ON contacts (workspace_id, (attributes -> 'score'))`),
  );
  // What autovacuum does after a bulk load: statistics, and the visibility map for index-only scans.
  await timed('VACUUM ANALYZE', async () => {
    for (const table of ['contacts', 'contact_identities', 'contact_tags', 'list_members', 'contact_events', 'tags', 'lists']) {
      await db.query(`VACUUM ANALYZE ${table}`);
    }
  });
}

/** The workspace's rows, children first in bulk (a cascade from the workspace would go contact by contact). */
async function cleanUp(db: Sequelize, workspaceId: string): Promise<void> {
  for (const table of ['contact_events', 'contact_tags', 'list_members', 'contact_identities', 'contacts', 'workspaces']) {
    await db.query(`DELETE FROM ${table} WHERE ${table === 'workspaces' ? 'id' : 'workspace_id'} = $1`, { bind: [workspaceId] });
  }
}

async function main(): Promise<void> {
  const api = await startApi({ RATE_LIMIT_PER_SECOND: '100000', LOG_LEVEL: 'silent' });
  const { workspaceId, apiKey } = await createTestWorkspace(api, { name: 'segments benchmark' });
  const call = (path: string, body: unknown) => api.call('POST', `/api/v1${path}`, { key: apiKey, body });
  try {
    await call('/custom-fields', { key: 'plan', label: 'Plan', type: 'select', options: ['free', 'pro', 'team', 'enterprise'] });
    await call('/custom-fields', { key: 'score', label: 'Score', type: 'number' });
    const tags = [(await call('/tags', { name: 'vip' })).body, (await call('/tags', { name: 'rare' })).body] as Array<{ id: string }>;
    const lists = [(await call('/lists', { name: 'newsletter' })).body, (await call('/lists', { name: 'beta' })).body] as Array<{ id: string }>;

    console.log(`\nSeeding one workspace in SQL`);
    const seeding = process.hrtime.bigint();
    await seed(api.db, workspaceId, { tags: tags.map((tag) => tag.id), lists: lists.map((list) => list.id) });
    console.log(`  ${'seeding total'.padEnd(44)} ${(Number(process.hrtime.bigint() - seeding) / 1e9).toFixed(1)} s`);

    const attribute = (key: string, operator: string, value: unknown) => ({ type: 'attribute', key, operator, value });
    const cases: Array<{ label: string; target: number; rules: unknown[] }> = [
      { label: 'attribute plan = enterprise (GIN)', target: 500, rules: [attribute('plan', 'eq', 'enterprise')] },
      { label: 'attribute score >= 90 (expression index)', target: 500, rules: [attribute('score', 'gte', 90)] },
      { label: 'tag vip (10%)', target: 500, rules: [{ type: 'tag', operator: 'has', tagId: tags[0].id }] },
      { label: 'list newsletter (20%)', target: 500, rules: [{ type: 'list', operator: 'member', listId: lists[0].id }] },
      {
        // Not a sole membership, so counted through contacts: the general path of a tag condition.
        label: 'tag vip + created in 10 years (join path)',
        target: 500,
        rules: [{ type: 'tag', operator: 'has', tagId: tags[0].id }, { type: 'created', operator: 'within_last', days: 3_650 }],
      },
      {
        label: 'tree of five conditions',
        target: 2_000,
        rules: [
          attribute('plan', 'in', ['pro', 'enterprise']),
          {
            type: 'group',
            operator: 'or',
            rules: [{ type: 'tag', operator: 'has', tagId: tags[0].id }, { type: 'list', operator: 'member', listId: lists[0].id }],
          },
          { type: 'created', operator: 'within_last', days: 365 },
          { type: 'event', name: 'purchase', operator: 'at_least', count: 1, withinDays: 30 },
        ],
      },
    ];

    console.log(`\nPOST /segments/preview over HTTP, ${RUNS} runs each after ${WARMUP} warm-up (count is exact; sample of 5)`);
    for (const { label, target, rules } of cases) {
      const definition = { operator: 'and', rules };
      const samples: number[] = [];
      let count = 0;
      for (let run = 0; run < WARMUP + RUNS; run += 1) {
        const started = process.hrtime.bigint();
        const response = await call('/segments/preview', { definition });
        const elapsed = Number(process.hrtime.bigint() - started) / 1e6;
        if (response.status !== 200) throw new Error(`${label}: ${response.status} ${JSON.stringify(response.body)}`);
        count = (response.body as { count: number }).count;
        if (run >= WARMUP) samples.push(elapsed);
      }
      const figures = summary(samples);
      const verdict = figures.p95 < target ? 'ok' : 'MISSED';
      console.log(`  ${label.padEnd(44)} count ${String(count).padStart(7)}  p50 ${ms(figures.p50)}  p95 ${ms(figures.p95)}  (target p95 < ${target} ms: ${verdict})`);
    }
    if (process.env.BENCH_EXPLAIN === '1') await explain(api.db, workspaceId, cases);
  } finally {
    if (process.env.BENCH_KEEP !== '1') {
      await timed('\ncleanup', async () => {
        await cleanUp(api.db, workspaceId);
        await api.db.query('DROP INDEX IF EXISTS contacts_score_idx');
      });
    }
    await api.close();
  }
}

/** The plan of each case's count query, as the preview runs it, to see which indexes it reaches. */
async function explain(db: Sequelize, workspaceId: string, cases: Array<{ label: string; rules: unknown[] }>): Promise<void> {
  const fields = fieldsByKey(await listCustomFields(db, workspaceId));
  for (const { label, rules } of cases) {
    const { count } = audienceQueries(workspaceId, parseAudienceRules({ operator: 'and', rules }), { fields, now: new Date() });
    const plan = await inAudienceSession(db, (transaction) =>
      db.query<{ 'QUERY PLAN': string }>(`EXPLAIN (ANALYZE, BUFFERS) ${count.sql}`, { bind: count.bind, type: QueryTypes.SELECT, transaction }),
    );
    console.log(`\n${label}\n${plan.map((row) => row['QUERY PLAN']).join('\n')}`);
  }
}

main().catch((err: unknown) => {
  console.error(err);
  process.exit(1);
});
