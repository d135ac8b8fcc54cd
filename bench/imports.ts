import { randomUUID } from 'node:crypto';
import { chmod, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { connectTemporal } from '../temporal/connection';
import { NativeConnection, Worker } from '@temporalio/worker';
import { pino } from 'pino';
import { QueryTypes, type Sequelize } from 'sequelize';
import { createImportActivities } from '../activities/imports';
import { createImportService } from '../api/imports/service';
import { loadConfig } from '../core/config';
import { taskQueueName } from '../core/task-queues';
import { blobStoreOptions, createBlobStore } from '../db/blob-store';
import { findImportJob } from '../db/repositories/import-jobs';
import { createSequelize } from '../db/sequelize';
import { createAttachmentFiles } from '../db/attachment-files';
import { createTestWorkspace } from '../test/helpers/workspaces';
import '../test/helpers/quiet-temporal-runtime';

/**
 * A contact import of a million generated rows (email, a name attribute, a tag, a list) through the real
 * path: the file stored in the blob store (the AWS stand-in), the job and its workflow created as POST
 * /imports creates them, a worker on a task queue of its own running the import's activities, the
 * database written batch by batch. Prints the counting pass, the import and the whole, in rows per second,
 * beside the baseline: a bare COPY of the same file into a temporary table (server-side, so the database
 * must run on this machine, as the project-local one does). Target: at least 10,000 rows/s (listmonk's
 * importer's figure). BENCH_ROWS sizes the file, BENCH_KEEP=1 leaves the workspace in place.
 */
const ROWS = Number(process.env.BENCH_ROWS ?? 1_000_000);

function csv(rows: number): Buffer {
  const lines = ['email,name,tag,newsletter'];
  for (let i = 0; i < rows; i += 1) lines.push(`user${i}@bench.example.com,Person ${i},tag${i % 10},${i % 5 === 0 ? 'yes' : 'no'}`);
  return Buffer.from(`${lines.join('\n')}\n`);
}

const seconds = (from: bigint) => Number(process.hrtime.bigint() - from) / 1e9;
const line = (label: string, rows: number, elapsed: number) =>
  console.log(`  ${label.padEnd(40)} ${elapsed.toFixed(1).padStart(6)} s  ${Math.round(rows / elapsed).toLocaleString('en').padStart(9)} rows/s`);

async function baselineCopy(db: Sequelize, path: string): Promise<number> {
  return db.transaction(async (transaction) => {
    await db.query('CREATE TEMP TABLE bench_rows (email text, name text, tag text, newsletter text) ON COMMIT DROP', { transaction });
    const started = process.hrtime.bigint();
    await db.query(`COPY bench_rows FROM '${path}' WITH (FORMAT csv, HEADER true)`, { transaction });
    return seconds(started);
  });
}

async function cleanUp(db: Sequelize, workspaceId: string): Promise<void> {
  for (const table of ['contact_tags', 'list_members', 'contact_identities', 'contacts', 'tags', 'lists', 'import_jobs', 'attachments', 'workspaces']) {
    await db.query(`DELETE FROM ${table} WHERE ${table === 'workspaces' ? 'id' : 'workspace_id'} = $1`, { bind: [workspaceId] });
  }
}

async function main(): Promise<void> {
  const config = loadConfig(process.env);
  const db = createSequelize(config.DATABASE_URL);
  const blobs = createBlobStore(blobStoreOptions(config));
  const prefix = `bench-imports-${randomUUID()}-`;
  const connection = await NativeConnection.connect({ address: config.TEMPORAL_ADDRESS });
  const temporal = await connectTemporal(config);
  // The workflow on `control`, its slices on `bulk`, as workers/main.ts runs them.
  const activities = createImportActivities({ db, blobs });
  const workers = [
    await Worker.create({ connection, taskQueue: taskQueueName(prefix, 'control'), workflowsPath: require.resolve('../workflows'), activities }),
    await Worker.create({ connection, taskQueue: taskQueueName(prefix, 'bulk'), activities }),
  ];
  const running = Promise.all(workers.map((worker) => worker.run()));
  const { workspaceId } = await createTestWorkspace(db, { name: 'imports benchmark', plan: 'pro' });
  const path = join(tmpdir(), `bench-imports-${randomUUID()}.csv`);
  try {
    const bytes = csv(ROWS);
    await writeFile(path, bytes);
    await chmod(path, 0o644);
    console.log(`\n${ROWS.toLocaleString('en')} rows, ${(bytes.length / 1e6).toFixed(1)} MB`);
    line('baseline: bare COPY into a temp table', ROWS, await baselineCopy(db, path));

    const attachment = await createAttachmentFiles({ db, blobs }).store(workspaceId, { filename: 'contacts.csv', contentType: 'text/csv', bytes, origin: 'upload' });
    const imports = createImportService({
      db,
      blobs,
      temporal,
      taskQueuePrefix: prefix,
      logger: pino({ level: 'silent' }),
    });
    const started = process.hrtime.bigint();
    const job = await imports.create(workspaceId, {
      provider: 'csv',
      attachmentId: attachment.id,
      mapping: { email: 'email', name: 'attribute:name', tag: 'tag', newsletter: 'list:Newsletter' },
      options: {},
    });
    let counted: number | null = null;
    let lastReport = 0;
    for (;;) {
      const now = (await findImportJob(db, workspaceId, job.id)) ?? job;
      if (counted === null && now.phase === 'importing') counted = seconds(started);
      if (seconds(started) - lastReport >= 10) {
        lastReport = seconds(started);
        console.log(`    ${lastReport.toFixed(0).padStart(4)} s  ${now.phase} ${now.processed.toLocaleString('en')}/${now.total?.toLocaleString('en') ?? '?'}`);
      }
      if (['completed', 'failed', 'canceled'].includes(now.phase)) {
        const total = seconds(started);
        if (now.phase !== 'completed') throw new Error(`the import ended ${now.phase}: ${now.failureReason}`);
        line('counting pass (csv-parse, no row handling)', ROWS, counted ?? total);
        line('importing (batches of 5,000)', ROWS, total - (counted ?? 0));
        line('import, end to end', ROWS, total);
        console.log(`  created ${now.created.toLocaleString('en')}, updated ${now.updated}, failed ${now.failed}`);
        break;
      }
      await new Promise((resolve) => setTimeout(resolve, 200));
    }
    const [check] = await db.query<{ contacts: number; identities: number; tagged: number; listed: number }>(
      `SELECT (SELECT count(*)::int FROM contacts WHERE workspace_id = $1) AS contacts,
              (SELECT count(*)::int FROM contact_identities WHERE workspace_id = $1) AS identities,
              (SELECT count(*)::int FROM contact_tags WHERE workspace_id = $1) AS tagged,
              (SELECT count(*)::int FROM list_members WHERE workspace_id = $1) AS listed`,
      { bind: [workspaceId], type: QueryTypes.SELECT },
    );
    console.log(`  stored: ${JSON.stringify(check)}`);
  } finally {
    for (const worker of workers) worker.shutdown();
    await running;
    await rm(path, { force: true });
    if (process.env.BENCH_KEEP !== '1') await cleanUp(db, workspaceId);
    blobs.close();
    await connection.close();
    await temporal.connection.close();
    await db.close();
  }
}

main().catch((err: unknown) => {
  console.error(err);
  process.exit(1);
});
