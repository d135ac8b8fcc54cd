import { createHash, randomUUID } from 'node:crypto';
import { QueryTypes, type Sequelize } from 'sequelize';
import { createRevenueReports } from '../api/commerce/reports';
import { amountText } from '../core/commerce/money';
import { recordOrder } from '../services/order-recording';
import { attributedTotals, ordersWithTouches } from '../db/repositories/revenue';
import { createSequelize } from '../db/sequelize';
import { insertWorkspace } from '../db/repositories/workspaces';
import { ms, summary } from './stats';

/**
 * Order attribution against a large click history (issue 17: 100,000 orders against 10 million clicks).
 * Seeds one fresh workspace's utm_touches in SQL (generate_series: 80% campaign, 10% automation, 10%
 * transactional clicks, 70% of them on content links, over 90 days, spread over BENCH_CONTACTS contacts),
 * then places BENCH_ORDERS orders through the service POST /commerce/orders calls (the order with its
 * attribution, then its conversion, in one transaction), BENCH_CONCURRENCY at a time, and reports the time
 * per order and the statements each one ran, beside a baseline of the same number of bare order inserts.
 * `npm run bench -- attribution`; BENCH_TOUCHES and BENCH_ORDERS size it, BENCH_KEEP=1 leaves the rows in place.
 */
const TOUCHES = Number(process.env.BENCH_TOUCHES ?? 10_000_000);
const ORDERS = Number(process.env.BENCH_ORDERS ?? 100_000);
const CONTACTS = Number(process.env.BENCH_CONTACTS ?? 1_000_000);
const CONCURRENCY = Number(process.env.BENCH_CONCURRENCY ?? 8);

async function timed<T>(label: string, work: () => Promise<T>): Promise<T> {
  const started = process.hrtime.bigint();
  const result = await work();
  console.log(`  ${label.padEnd(52)} ${(Number(process.hrtime.bigint() - started) / 1e9).toFixed(1)} s`);
  return result;
}

/** The contact of number n: a name-based uuid, so touches and orders agree without a contacts table. */
const CONTACT_SQL = `md5($1::uuid::text || ':' || (g % $3::int))::uuid`;

async function seed(db: Sequelize, workspaceId: string, campaigns: string[], automations: string[]): Promise<void> {
  await timed(`utm_touches (${TOUCHES.toLocaleString('en')})`, () =>
    db.query(
      `INSERT INTO utm_touches (id, workspace_id, contact_id, source, medium, campaign, url, occurred_at, is_content, kind, campaign_id, automation_id)
       SELECT gen_random_uuid(), $1, ${CONTACT_SQL}, 'news', 'email', 'bench', 'https://shop.example.com/p/' || (g % 500),
         now() - random() * interval '90 days', random() < 0.7, k.kind,
         CASE WHEN k.kind = 'campaign' THEN ($4::uuid[])[1 + g % 20] END,
         CASE WHEN k.kind = 'automation' THEN ($5::uuid[])[1 + g % 5] END
       FROM generate_series(1, $2::int) AS g
       CROSS JOIN LATERAL (SELECT CASE WHEN g % 10 = 0 THEN 'transactional' WHEN g % 10 = 1 THEN 'automation' ELSE 'campaign' END AS kind) k`,
      { bind: [workspaceId, TOUCHES, CONTACTS, campaigns, automations] },
    ),
  );
  await timed('ANALYZE utm_touches', () => db.query('ANALYZE utm_touches'));
}

interface Run {
  seconds: number;
  samples: number[];
}

/** Runs `work` for 0..total-1, CONCURRENCY at a time, timing each call. */
async function concurrently(total: number, work: (i: number) => Promise<unknown>): Promise<Run> {
  const samples: number[] = [];
  let next = 0;
  const started = process.hrtime.bigint();
  await Promise.all(
    Array.from({ length: CONCURRENCY }, async () => {
      while (next < total) {
        const i = next++;
        const t0 = process.hrtime.bigint();
        await work(i);
        samples.push(Number(process.hrtime.bigint() - t0) / 1e6);
      }
    }),
  );
  return { seconds: Number(process.hrtime.bigint() - started) / 1e9, samples };
}

function report(label: string, run: Run): void {
  const { p50, p95, p99 } = summary(run.samples);
  console.log(`  ${label.padEnd(52)} ${run.seconds.toFixed(1)} s (${(run.samples.length / run.seconds).toFixed(0)}/s); p50 ${ms(p50)}, p95 ${ms(p95)}, p99 ${ms(p99)}`);
}

async function main(): Promise<void> {
  const statements = { count: 0 };
  const db = createSequelize(process.env.DATABASE_URL ?? '', { log: () => void (statements.count += 1) });
  const workspace = await insertWorkspace(db, { name: 'attribution bench', plan: 'pro' });
  const campaigns = Array.from({ length: 20 }, () => randomUUID());
  const automations = Array.from({ length: 5 }, () => randomUUID());
  console.log(`attribution: ${TOUCHES.toLocaleString('en')} clicks of ${CONTACTS.toLocaleString('en')} contacts, ${ORDERS.toLocaleString('en')} orders, ${CONCURRENCY} at a time`);
  await seed(db, workspace.id, campaigns, automations);

  // The seed's md5(workspace || ':' || n)::uuid, computed here so the timed loop runs the order's statements only.
  const contactOf = (n: number) => createHash('md5').update(`${workspace.id}:${n % CONTACTS}`).digest('hex').replace(/^(.{8})(.{4})(.{4})(.{4})/, '$1-$2-$3-$4-');

  // Baseline, same run: the order row alone (one INSERT in a transaction, same table and indexes), without
  // the attribution probe and the conversion, so the figure below reads as the price of attributing.
  const baseline = await concurrently(ORDERS, async (i) => {
    await db.transaction((transaction) =>
      db.query(
        `INSERT INTO commerce_orders (id, workspace_id, source, external_id, contact_id, total, currency, placed_at)
         VALUES (gen_random_uuid(), $1, 'store', $2, $3, $4, $5, $6)`,
        { bind: [workspace.id, `baseline-${i}`, contactOf(i * 7919), 10 + (i % 90), i % 5 === 0 ? 'EUR' : 'USD', new Date(Date.now() - (i % 60) * 86_400_000)], transaction },
      ),
    );
  });
  report('baseline: the order row alone', baseline);
  await db.query(`DELETE FROM commerce_orders WHERE workspace_id = $1 AND source = 'store'`, { bind: [workspace.id] });

  statements.count = 0;
  const attributed = await concurrently(ORDERS, async (i) => {
    // The buyer's id, as the service has it after its contact lookup (no contacts table is seeded).
    await recordOrder(db, workspace.id, {
      source: 'api', connectionId: null, externalId: `bench-${i}`, contactId: contactOf(i * 7919), status: 'placed',
      total: amountText(10 + (i % 90)), refunded: amountText(0), currency: i % 5 === 0 ? 'EUR' : 'USD',
      placedAt: new Date(Date.now() - (i % 60) * 86_400_000), items: [], test: false,
    });
  });
  report('orders placed with attribution and conversion', attributed);
  // The statements of one order: BEGIN, the window, the order with its attribution, the conversion, COMMIT.
  console.log(`  ${(statements.count / ORDERS).toFixed(1)} statements per order`);
  const counts = await db.query<{ attributed: string; orders: string }>(
    `SELECT count(*) AS orders, count(attributed_touch_id) AS attributed FROM commerce_orders WHERE workspace_id = $1 AND source = 'api'`,
    { bind: [workspace.id], type: QueryTypes.SELECT },
  );
  // Reports over those orders: one campaign's from the stored attribution (its index), then read again from
  // touches under another model (the campaign's clickers' orders, and the whole workspace's 90 days).
  // campaigns[2]: the seed gives the first two of every ten clicks to transactional mail and an automation.
  const stored = await timed('one campaign, stored attribution (last_content_click)', () => attributedTotals(db, workspace.id, { campaignId: campaigns[2] }));
  console.log(`    ${stored.reduce((sum, row) => sum + row.orders, 0)} orders`);
  const reread = await timed('one campaign, touches read again (?model=)', async () => {
    let orders = 0;
    for await (const page of ordersWithTouches(db, workspace.id, { campaignId: campaigns[2] }, 5)) orders += page.length;
    return orders;
  });
  console.log(`    ${reread} orders of its clickers`);
  const linear = await timed('workspace, 90 days, ?model=linear', () =>
    createRevenueReports(db).workspace(workspace.id, { from: new Date(Date.now() - 90 * 86_400_000).toISOString() }, 'linear', new Date()),
  );
  console.log(`    ${linear.orders} orders credited`);
  console.log(`  ${JSON.stringify(counts[0])}`);
  if (process.env.BENCH_KEEP !== '1') {
    await db.query('DELETE FROM utm_touches WHERE workspace_id = $1', { bind: [workspace.id] });
    await db.query('DELETE FROM workspaces WHERE id = $1', { bind: [workspace.id] });
  }
  await db.close();
}

void main();
