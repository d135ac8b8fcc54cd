import { spawn } from 'node:child_process';
import type { Sequelize, Transaction } from 'sequelize';
import { startApi } from '../test/helpers/api-harness';
import { createTestWorkspace } from '../test/helpers/workspaces';

/**
 * GET /contacts/export on a million contacts, end to end over HTTP (keyset pages of 2,000, CSV written
 * with back-pressure), beside a baseline: a bare `COPY (SELECT ...) TO STDOUT` of the same rows and columns
 * through psql, the fastest PostgreSQL can hand them out. Reports rows/s of each and the peak growth of the
 * process's resident memory during the export (the API runs in this process), which must stay flat.
 * BENCH_CONTACTS sizes the workspace; BENCH_KEEP=1 leaves it in place. Run with `npm run bench -- contacts-export`.
 */
const CONTACTS = Number(process.env.BENCH_CONTACTS ?? 1_000_000);

const seconds = (started: bigint) => Number(process.hrtime.bigint() - started) / 1e9;

/** Seeds in one transaction without the API's statement timeout: a million-row insert is not a request. */
async function seed(db: Sequelize, workspaceId: string, tagId: string, listId: string): Promise<void> {
  await db.transaction(async (transaction) => {
    await db.query("SELECT set_config('statement_timeout', '0', true)", { transaction });
    await seedRows(db, workspaceId, tagId, listId, transaction);
  });
  await db.query('ANALYZE contacts, contact_identities, contact_tags, list_members');
}

async function seedRows(db: Sequelize, workspaceId: string, tagId: string, listId: string, transaction: Transaction): Promise<void> {
  const run = (sql: string, bind: unknown[] = [workspaceId]) => db.query(sql, { bind, transaction });
  await run(
    `INSERT INTO contacts (id, workspace_id, attributes)
     SELECT gen_random_uuid(), $1, jsonb_build_object('firstName', 'First' || g, 'lastName', 'Last' || (g % 1000),
       'plan', (ARRAY['free', 'pro', 'team'])[1 + g % 3], 'score', g % 100)
     FROM generate_series(1, $2::int) AS g`,
    [workspaceId, CONTACTS],
  );
  await run(
    `INSERT INTO contact_identities (workspace_id, channel, address, contact_id, consent, is_primary)
     SELECT $1, 'email', 'user' || n || '@example.com', id, 'opted_in', true
     FROM (SELECT id, row_number() OVER () AS n FROM contacts WHERE workspace_id = $1) numbered`,
  );
  await run('INSERT INTO contact_tags (workspace_id, tag_id, contact_id) SELECT $1, $2::uuid, id FROM contacts WHERE workspace_id = $1 AND random() < 0.1', [workspaceId, tagId]);
  await run('INSERT INTO list_members (workspace_id, list_id, contact_id) SELECT $1, $2::uuid, id FROM contacts WHERE workspace_id = $1 AND random() < 0.2', [workspaceId, listId]);
}

/** The same rows and columns as the export, in one COPY: what the database alone costs. */
function baselineCopy(workspaceId: string): Promise<{ bytes: number; rows: number }> {
  const sql = `COPY (SELECT c.id, c.created_at, p.email, p.phone, p.telegram, p.consent,
      (SELECT string_agg(t.name, ',' ORDER BY lower(t.name)) FROM contact_tags ct JOIN tags t ON t.id = ct.tag_id WHERE ct.contact_id = c.id),
      (SELECT string_agg(l.name, ',' ORDER BY lower(l.name)) FROM list_members lm JOIN lists l ON l.id = lm.list_id WHERE lm.contact_id = c.id),
      c.attributes->>'firstName', c.attributes->>'lastName', c.attributes->>'plan', c.attributes->>'score'
    FROM contacts c
    LEFT JOIN LATERAL (SELECT max(address) FILTER (WHERE channel = 'email') AS email, max(address) FILTER (WHERE channel = 'whatsapp') AS phone,
      max(address) FILTER (WHERE channel = 'telegram') AS telegram, min(consent) AS consent
      FROM contact_identities i WHERE i.workspace_id = c.workspace_id AND i.contact_id = c.id AND i.is_primary) p ON true
    WHERE c.workspace_id = '${workspaceId}' ORDER BY c.id) TO STDOUT WITH (FORMAT csv)`;
  return new Promise((resolve, reject) => {
    const psql = spawn('psql', [process.env.DATABASE_URL ?? '', '-X', '-q', '-c', sql.replace(/\s+/g, ' ')], { stdio: ['ignore', 'pipe', 'inherit'] });
    let bytes = 0;
    let rows = 0;
    psql.stdout.on('data', (chunk: Buffer) => {
      bytes += chunk.length;
      for (const byte of chunk) if (byte === 10) rows += 1;
    });
    psql.on('error', reject);
    psql.on('close', (code) => (code === 0 ? resolve({ bytes, rows }) : reject(new Error(`psql exited ${code}`))));
  });
}

/** Reads the export as a client would, counting rows, while sampling this process's resident memory. */
async function httpExport(url: string, apiKey: string): Promise<{ bytes: number; rows: number; peakRssGrowthMb: number; peakHeapMb: number }> {
  const before = process.memoryUsage().rss;
  let peak = before;
  let peakHeap = 0;
  const sampler = setInterval(() => {
    const usage = process.memoryUsage();
    peak = Math.max(peak, usage.rss);
    peakHeap = Math.max(peakHeap, usage.heapUsed);
  }, 50);
  try {
    const response = await fetch(`${url}/api/v1/contacts/export`, { headers: { authorization: `Bearer ${apiKey}` } });
    if (!response.ok || !response.body) throw new Error(`export answered ${response.status}`);
    let bytes = 0;
    let rows = 0;
    for await (const chunk of response.body) {
      const part = chunk as Uint8Array;
      bytes += part.length;
      for (const byte of part) if (byte === 10) rows += 1;
    }
    return { bytes, rows: rows - 1, peakRssGrowthMb: (peak - before) / 2 ** 20, peakHeapMb: peakHeap / 2 ** 20 };
  } finally {
    clearInterval(sampler);
  }
}

async function main(): Promise<void> {
  const api = await startApi({ RATE_LIMIT_PER_SECOND: '100000', LOG_LEVEL: 'silent' });
  const { workspaceId, apiKey } = await createTestWorkspace(api, { name: 'contacts export benchmark' });
  const call = (path: string, body: unknown) => api.call('POST', `/api/v1${path}`, { key: apiKey, body });
  try {
    const tag = (await call('/tags', { name: 'vip' })).body as { id: string };
    const list = (await call('/lists', { name: 'newsletter' })).body as { id: string };
    let started = process.hrtime.bigint();
    await seed(api.db, workspaceId, tag.id, list.id);
    console.log(`\nseeded ${CONTACTS.toLocaleString('en')} contacts (email identity, 4 attributes, 10% tagged, 20% in a list) in ${seconds(started).toFixed(1)} s`);

    started = process.hrtime.bigint();
    const copy = await baselineCopy(workspaceId);
    const copySeconds = seconds(started);
    started = process.hrtime.bigint();
    const exported = await httpExport(api.url, apiKey);
    const exportSeconds = seconds(started);
    if (exported.rows !== CONTACTS || copy.rows !== CONTACTS) throw new Error(`rows: export ${exported.rows}, copy ${copy.rows}, expected ${CONTACTS}`);

    const rate = (rows: number, s: number) => `${Math.round(rows / s).toLocaleString('en').padStart(9)} rows/s`;
    console.log(`\n  ${'baseline: COPY (SELECT ...) TO STDOUT via psql'.padEnd(50)} ${copySeconds.toFixed(1).padStart(6)} s ${rate(copy.rows, copySeconds)}  ${(copy.bytes / 2 ** 20).toFixed(0)} MB`);
    console.log(`  ${'GET /contacts/export over HTTP'.padEnd(50)} ${exportSeconds.toFixed(1).padStart(6)} s ${rate(exported.rows, exportSeconds)}  ${(exported.bytes / 2 ** 20).toFixed(0)} MB`);
    // Garbage collected lazily shows in both; compare BENCH_CONTACTS=100000 with a million: flat means the same.
    console.log(`  during the export (API and client in this process): peak heap used ${exported.peakHeapMb.toFixed(0)} MB, peak resident growth ${exported.peakRssGrowthMb.toFixed(0)} MB`);
  } finally {
    if (process.env.BENCH_KEEP !== '1') {
      await api.db.transaction(async (transaction) => {
        await api.db.query("SELECT set_config('statement_timeout', '0', true)", { transaction });
        for (const table of ['contact_tags', 'list_members', 'contact_identities', 'contacts', 'workspaces']) {
          await api.db.query(`DELETE FROM ${table} WHERE ${table === 'workspaces' ? 'id' : 'workspace_id'} = $1`, { bind: [workspaceId], transaction });
        }
      });
    }
    await api.close();
  }
}

main().catch((err: unknown) => {
  console.error(err);
  process.exit(1);
});
