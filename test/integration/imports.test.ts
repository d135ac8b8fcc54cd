import type { Client } from '@temporalio/client';
import { connectTemporal } from '../../temporal/connection';
import { MockActivityEnvironment } from '@temporalio/testing';
import { DefaultLogger } from '@temporalio/worker';
import { PassThrough } from 'node:stream';
import { QueryTypes, type Sequelize } from 'sequelize';
import { createImportActivities, type ImportSettings, type ImportStep } from '../../activities/imports';
import { blobStoreOptions, createBlobStore, type BlobStore } from '../../db/blob-store';
import type { ApiResponse } from '../helpers/api-harness';
import { startEmailStack, type EmailStack } from '../helpers/email-stack';
import { createTestWorkspace } from '../helpers/workspaces';
import { standInResolver, type StandInServer, startStandInServer } from '../helpers/ssrf-stand-in';
import { parseMappingFlag, watchImport } from '../../scripts/admin-imports';

// Imports through the real API, workflow, worker, blob store (the AWS stand-in) and database. Batches are
// small here (3 rows) so every file crosses several of them.
const LISTMONK_CSV = [
  'uuid,email,name,attributes,status,created_at,updated_at',
  'u1,lm1@example.com,Lisa,"{""city"":""Oslo"",""score"":5}",enabled,2024-01-01,2024-01-01',
  'u2,lm2@example.com,Leo,{},blocklisted,2024-01-01,2024-01-01',
  'u3,lm3@example.com,Bad,"{not json",enabled,2024-01-01,2024-01-01',
].join('\n');

let stack: EmailStack;
let files: StandInServer;
let blobs: BlobStore;
let temporal: Client;
beforeAll(async () => {
  files = await startStandInServer({
    '/subscribers.csv': (_req, res) => {
      res.writeHead(200, { 'content-type': 'text/csv' }).end(LISTMONK_CSV);
    },
  });
  const fetch = { resolveHost: standInResolver({ 'files.test': ['127.0.0.1'], 'intranet.test': ['10.0.0.7'] }), testOnlyPublicLoopbackPort: files.port, ca: files.ca };
  stack = await startEmailStack({
    overrides: { RATE_LIMIT_PER_SECOND: '1000' },
    attachmentFetch: fetch,
    activities: { importFetch: fetch, importSettings: { batchRows: 3 } },
  });
  blobs = createBlobStore(blobStoreOptions(stack.api.config));
  temporal = await connectTemporal(stack.api.config);
});
afterAll(async () => {
  blobs.close();
  await temporal.connection.close();
  await stack.close();
  await files.close();
});

jest.setTimeout(120_000);

type Call = (method: string, path: string, body?: unknown) => Promise<ApiResponse>;

interface Job {
  id: string;
  status: string;
  phase: string;
  error: string | null;
  progress: { processed: number; total: number | null; created: number; updated: number; failed: number; errors: Array<{ line: number; message: string }> };
}

async function workspace() {
  const { workspaceId, call } = await createTestWorkspace(stack.api, { plan: 'pro' });
  return { workspaceId, call };
}

async function upload(call: Call, csv: string): Promise<string> {
  const response = await call('POST', '/attachments', { filename: 'contacts.csv', content: Buffer.from(csv).toString('base64') });
  expect(response.status).toBe(201);
  return (response.body as { attachment: { id: string } }).attachment.id;
}

async function startImport(call: Call, body: Record<string, unknown>): Promise<Job> {
  const response = await call('POST', '/imports', body);
  expect(response).toMatchObject({ status: 202, body: { status: 'pending', phase: 'queued' } });
  return response.body as Job;
}

async function finished(call: Call, id: string): Promise<Job> {
  for (const deadline = Date.now() + 60_000; Date.now() < deadline; ) {
    const job = (await call('GET', `/imports/${id}`)).body as Job;
    if (['completed', 'failed', 'canceled'].includes(job.status)) return job;
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  throw new Error(`import ${id} never ended`);
}

const select = <T extends object>(sql: string, bind: unknown[]) => stack.api.db.query<T>(sql, { bind, type: QueryTypes.SELECT });

/** A contact by one of its addresses: attributes, identities, tags and lists, as stored. */
async function contactOf(workspaceId: string, channel: string, address: string) {
  const [owner] = await select<{ contact_id: string }>('SELECT contact_id FROM contact_identities WHERE workspace_id = $1 AND channel = $2 AND address = $3', [workspaceId, channel, address]);
  if (!owner) return null;
  const id = owner.contact_id;
  const [contact] = await select<{ attributes: Record<string, unknown> }>('SELECT attributes FROM contacts WHERE id = $1', [id]);
  const identities = await select<{ channel: string; address: string; consent: string; is_primary: boolean }>(
    'SELECT channel, address, consent, is_primary FROM contact_identities WHERE contact_id = $1 ORDER BY channel, address',
    [id],
  );
  const tags = await select<{ name: string }>('SELECT t.name FROM contact_tags ct JOIN tags t ON t.id = ct.tag_id WHERE ct.contact_id = $1 ORDER BY t.name', [id]);
  const lists = await select<{ name: string }>('SELECT l.name FROM list_members m JOIN lists l ON l.id = m.list_id WHERE m.contact_id = $1 ORDER BY l.name', [id]);
  return { id, attributes: contact.attributes, identities, tags: tags.map((tag) => tag.name), lists: lists.map((list) => list.name) };
}

async function counts(workspaceId: string) {
  const [row] = await select<{ contacts: number; identities: number }>(
    `SELECT (SELECT count(*)::int FROM contacts WHERE workspace_id = $1) AS contacts,
            (SELECT count(*)::int FROM contact_identities WHERE workspace_id = $1) AS identities`,
    [workspaceId],
  );
  return row;
}

describe('csv imports', () => {
  it('maps columns to identities, attributes, tags and lists; counts created and updated exactly; bad rows are reported by line and the import goes on', async () => {
    const { workspaceId, call } = await workspace();
    const existing = await call('POST', '/contacts', { identities: [{ channel: 'email', address: 'existing@example.com' }], attributes: { plan: 'old' } });
    const csv = [
      'email,phone,first_name,plan,tags,vip,telegram',
      'ann@example.com,+14155550100,Ann,pro,"a, b",yes,',
      'BOB@Example.com,,Bob,free,b,no,',
      'not-an-email,,Bad,free,,,',
      'carol@example.com,+1415,Carol,free,,,',
      'dave@example.com,,Dave,pro,,,,extra',
      ',,,,,,',
      'ann@example.com,,Ann2,team,c,,',
      'existing@example.com,,Eve,,,,',
      'erin@example.com,,Erin,,,,123456789',
    ].join('\n');
    const job = await startImport(call, {
      provider: 'csv',
      attachmentId: await upload(call, csv),
      mapping: { email: 'email', phone: 'phone', first_name: 'attribute:firstName', plan: 'attribute:plan', tags: 'tag', vip: 'list:VIP', telegram: 'telegram' },
      options: { consent: 'opted_in', tags: ['imported'] },
    });
    const done = await finished(call, job.id);
    expect(done).toMatchObject({ status: 'completed', phase: 'completed', error: null, progress: { total: 9, processed: 9, created: 3, updated: 2, failed: 4 } });
    expect(done.progress.errors).toEqual([
      { line: 4, message: expect.stringMatching(/^email: /) },
      { line: 5, message: expect.stringMatching(/^phone: /) },
      { line: 6, message: 'Expected 7 columns, found 8' },
      { line: 7, message: 'No email, phone or telegram in this row' },
    ]);

    expect(await contactOf(workspaceId, 'email', 'ann@example.com')).toMatchObject({
      attributes: { firstName: 'Ann2', plan: 'team' },
      identities: [
        { channel: 'email', address: 'ann@example.com', consent: 'opted_in', is_primary: true },
        { channel: 'whatsapp', address: '+14155550100', consent: 'opted_in', is_primary: true },
      ],
      tags: ['a', 'b', 'c', 'imported'],
      lists: ['VIP'],
    });
    expect(await contactOf(workspaceId, 'email', 'bob@example.com')).toMatchObject({ attributes: { firstName: 'Bob', plan: 'free' }, tags: ['b', 'imported'], lists: [] });
    expect(await contactOf(workspaceId, 'telegram', '123456789')).toMatchObject({ identities: [{ channel: 'email' }, { channel: 'telegram', is_primary: true }] });
    // The existing contact: merged, its empty cells changing nothing, its consent as it was.
    expect(await contactOf(workspaceId, 'email', 'existing@example.com')).toMatchObject({
      id: (existing.body as { id: string }).id,
      attributes: { plan: 'old', firstName: 'Eve' },
      identities: [{ consent: 'unknown' }],
      tags: ['imported'],
    });
    expect(await counts(workspaceId)).toEqual({ contacts: 4, identities: 6 });
    expect((await call('GET', '/tags')).body).toMatchObject({ data: expect.arrayContaining([expect.objectContaining({ name: 'imported', contacts: 4 })]) });

    const listed = await call('GET', '/imports');
    expect(listed).toMatchObject({ status: 200, body: { data: [{ id: job.id, status: 'completed', entities: { contacts: true, attributes: true, tags: true, lists: true } }] } });
  });

  it('a Mailchimp audience export is read by its preset, which the caller\'s mapping overrides column by column', async () => {
    const { workspaceId, call } = await workspace();
    const csv = [
      'Email Address,First Name,Last Name,Address,Phone Number,MEMBER_RATING,OPTIN_TIME,TAGS',
      'mc1@example.com,Mia,Chimp,"1 Main St",+14155550102,2,2024-01-01 10:00:00,"""Customers"",""VIP"""',
      'mc2@example.com,Max,,,,1,,',
    ].join('\r\n');
    const job = await startImport(call, { provider: 'mailchimp', attachmentId: await upload(call, csv), mapping: { 'Phone Number': 'phone' } });
    expect(await finished(call, job.id)).toMatchObject({ status: 'completed', progress: { total: 2, created: 2, failed: 0 } });
    expect(await contactOf(workspaceId, 'email', 'mc1@example.com')).toMatchObject({
      attributes: { firstName: 'Mia', lastName: 'Chimp', address: '1 Main St', memberRating: '2', optinTime: '2024-01-01 10:00:00' },
      identities: [{ channel: 'email' }, { channel: 'whatsapp', address: '+14155550102' }],
      tags: ['Customers', 'VIP'],
    });
    expect(await contactOf(workspaceId, 'email', 'mc2@example.com')).toMatchObject({ attributes: { firstName: 'Max', memberRating: '1' }, tags: [] });
  });

  it('a listmonk export from a public https URL: attributes from its JSON column, blocklisted subscribers unsubscribed and suppressed', async () => {
    const { workspaceId, call } = await workspace();
    const job = await startImport(call, { provider: 'listmonk', url: `https://files.test:${files.port}/subscribers.csv` });
    const done = await finished(call, job.id);
    expect(done).toMatchObject({ status: 'completed', progress: { total: 3, processed: 3, created: 2, failed: 1, errors: [{ line: 4, message: 'attributes: expected a JSON object' }] } });
    expect(await contactOf(workspaceId, 'email', 'lm1@example.com')).toMatchObject({ attributes: { name: 'Lisa', city: 'Oslo', score: 5 }, identities: [{ consent: 'unknown' }] });
    expect(await contactOf(workspaceId, 'email', 'lm2@example.com')).toMatchObject({ identities: [{ consent: 'opted_out' }] });
    expect(await select('SELECT address, reason FROM suppressions WHERE workspace_id = $1', [workspaceId])).toEqual([{ address: 'lm2@example.com', reason: 'unsubscribed' }]);
    // The copy of the URL's file is deleted once the import ended.
    const storageKey = `imports/${workspaceId}/${job.id}.csv`;
    for (const deadline = Date.now() + 10_000; (await blobs.head(storageKey)) && Date.now() < deadline; ) await new Promise((resolve) => setTimeout(resolve, 100));
    expect(await blobs.head(storageKey)).toBeNull();
  });

  it('an export of one workspace imports into another column for column: identities, attributes, tags and lists', async () => {
    const source = await workspace();
    const csv = ['email,phone,first,groups,vip,news', 'rt1@example.com,+14155550103,Rita,"a,b",yes,yes', 'rt2@example.com,,Rob,,,yes'].join('\n');
    const mapping = { email: 'email', phone: 'phone', first: 'attribute:firstName', groups: 'tag', vip: 'list:VIP', news: 'list:News' };
    await finished(source.call, (await startImport(source.call, { provider: 'csv', attachmentId: await upload(source.call, csv), mapping })).id);
    const exported = await source.call('GET', '/contacts/export');
    expect(exported.status).toBe(200);
    const target = await workspace();
    const header = (exported.body as string).split('\r\n')[0].split(',');
    const back = Object.fromEntries(
      header.map((column) => [column, column === 'tags' ? 'tag' : ['email', 'phone', 'telegram', 'lists'].includes(column) || column.startsWith('attribute:') ? column : 'ignore']),
    );
    const job = await startImport(target.call, { provider: 'csv', attachmentId: await upload(target.call, exported.body as string), mapping: back });
    expect(await finished(target.call, job.id)).toMatchObject({ status: 'completed', progress: { total: 2, created: 2, failed: 0 } });
    // Everything but the contact's id (each workspace has its own) comes back as it was.
    const withoutId = (contact: Awaited<ReturnType<typeof contactOf>>) => contact && { ...contact, id: undefined };
    for (const address of ['rt1@example.com', 'rt2@example.com']) {
      expect(withoutId(await contactOf(target.workspaceId, 'email', address))).toEqual(withoutId(await contactOf(source.workspaceId, 'email', address)));
    }
    expect(await contactOf(target.workspaceId, 'email', 'rt1@example.com')).toMatchObject({ tags: ['a', 'b'], lists: ['News', 'VIP'], attributes: { firstName: 'Rita' } });
  });

  it('the admin CLI follows an import to its end, a line per change when not on a terminal', async () => {
    const { call } = await workspace();
    const mapping = parseMappingFlag('Mail Address=email,Full Name=attribute:name');
    expect(mapping).toEqual({ 'Mail Address': 'email', 'Full Name': 'attribute:name' });
    const csv = ['Mail Address,Full Name', ...Array.from({ length: 12 }, (_, i) => `w${i}@example.com,W ${i}`)].join('\n');
    const job = await startImport(call, { provider: 'csv', attachmentId: await upload(call, csv), mapping });
    const out = new PassThrough();
    let printed = '';
    out.on('data', (chunk: Buffer) => (printed += chunk.toString()));
    const ended = await watchImport(stack.api.db, job.id, out);
    expect(ended).toMatchObject({ phase: 'completed', processed: 12, created: 12 });
    const lines = printed.trim().split('\n');
    expect(lines.at(-1)).toMatch(/ completed 12\/12 \(created 12, updated 0, failed 0\)$/);
    // Each line is a change: no line repeats the one before it.
    expect(lines.filter((line, i) => i > 0 && line.slice(25) === lines[i - 1].slice(25))).toEqual([]);
  });

  it('a file with a header and no rows completes with nothing processed', async () => {
    const { call } = await workspace();
    const job = await startImport(call, { provider: 'csv', attachmentId: await upload(call, 'email,name\n'), mapping: { email: 'email' } });
    expect(await finished(call, job.id)).toMatchObject({ status: 'completed', progress: { total: 0, processed: 0, created: 0 } });
  });

  it('an import naming a column the file lacks fails with the reason', async () => {
    const { call } = await workspace();
    const job = await startImport(call, { provider: 'csv', attachmentId: await upload(call, 'mail,name\na@example.com,A\n'), mapping: { email: 'email' } });
    expect(await finished(call, job.id)).toMatchObject({ status: 'failed', phase: 'failed', error: 'The file has no column "email"', progress: { processed: 0 } });
  });

  it('invalid bodies answer 422 naming the field: an unknown target, both or neither source, an http or private URL', async () => {
    const { call } = await workspace();
    const attachmentId = await upload(call, 'email\na@example.com\n');
    const refused = async (body: Record<string, unknown>, field: string) =>
      expect(await call('POST', '/imports', { provider: 'csv', mapping: { email: 'email' }, ...body })).toMatchObject({
        status: 422,
        body: { error: { fieldErrors: { [field]: expect.any(Array) } } },
      });
    await refused({ attachmentId, mapping: { email: 'email', city: 'town' } }, 'mapping.city');
    await refused({ attachmentId, url: 'https://files.test/subscribers.csv' }, 'attachmentId');
    await refused({}, 'attachmentId');
    await refused({ url: 'http://files.test/subscribers.csv' }, 'url');
    await refused({ url: 'https://intranet.test/contacts.csv' }, 'url');
    await refused({ attachmentId: '00000000-0000-4000-8000-000000000000' }, 'attachmentId');
    expect(await call('POST', '/imports', { provider: 'csv', attachmentId, mapping: { name: 'attribute:name' } })).toMatchObject({ status: 422 });
    expect(await call('POST', '/imports', { provider: 'excel', attachmentId, mapping: { email: 'email' } })).toMatchObject({ status: 422 });
  });

  it("another workspace's import is not found", async () => {
    const owner = await workspace();
    const other = await workspace();
    const job = await startImport(owner.call, { provider: 'csv', attachmentId: await upload(owner.call, 'email\nx@example.com\n'), mapping: { email: 'email' } });
    expect(await other.call('GET', `/imports/${job.id}`)).toMatchObject({ status: 404, body: { error: 'not_found' } });
    expect(await other.call('POST', `/imports/${job.id}/cancel`)).toMatchObject({ status: 404, body: { error: 'not_found' } });
    expect((await other.call('GET', '/imports')).body).toEqual({ data: [] });
    expect(await finished(owner.call, job.id)).toMatchObject({ status: 'completed', progress: { created: 1 } });
  });
});

describe('restarts and cancel', () => {
  const ref = (workspaceId: string, importId: string) => ({ workspaceId, importId });
  const rows = (count: number) => ['email,name', ...Array.from({ length: count }, (_, i) => `r${i}@example.com,Row ${i}`)].join('\n');
  /** The activities as a worker would run them, with two-row batches and a slice that returns after one batch. */
  const activitiesOn = (db: Sequelize, settings: Partial<ImportSettings> = {}) => createImportActivities({ db, blobs, settings: { batchRows: 2, sliceMs: 0, ...settings } });

  /** A database connection that dies just before a batch's counters are written, the batch's contacts already sent. */
  const crashingBeforeCommit = (db: Sequelize): Sequelize =>
    new Proxy(db, {
      get(target, property) {
        if (property === 'query') {
          return (sql: string, options: object) => {
            if (String(sql).includes('checkpoint_offset = $8')) return Promise.reject(new Error('worker crashed'));
            return target.query(sql, options);
          };
        }
        const value: unknown = Reflect.get(target, property);
        return typeof value === 'function' ? value.bind(target) : value;
      },
    });

  /** Runs the test with the workers stopped until it starts them; they run again afterwards whatever happens. */
  async function withWorkersStopped(test: (startWorkers: () => Promise<void>) => Promise<void>): Promise<void> {
    await stack.stopWorkers();
    let started = false;
    const startWorkers = async () => {
      await stack.startWorkers();
      started = true;
    };
    try {
      await test(startWorkers);
    } finally {
      if (!started) await stack.startWorkers();
    }
  }

  it('a worker that dies before a batch commits redoes it, one that dies after resumes past it: no duplicates, exact counts', async () => {
    const { workspaceId, call } = await workspace();
    await withWorkersStopped(async (startWorkers) => {
      const job = await startImport(call, { provider: 'csv', attachmentId: await upload(call, rows(10)), mapping: { email: 'email', name: 'attribute:name' } });
      // Its crashes are on purpose: the SDK's warning of each would only be noise in the output.
      const environment = new MockActivityEnvironment(undefined, { logger: new DefaultLogger('ERROR') });
      const activities = activitiesOn(stack.api.db);
      expect(await environment.run(activities.prepareImport, ref(workspaceId, job.id))).toEqual({ state: 'importing' });
      // One batch committed, then the slice ends as a crash after the commit would.
      expect(await environment.run(activities.importSlice, ref(workspaceId, job.id))).toEqual({ state: 'importing' });
      expect((await call('GET', `/imports/${job.id}`)).body).toMatchObject({ status: 'running', phase: 'importing', progress: { total: 10, processed: 2, created: 2 } });
      // The next batch dies before its commit: none of its rows stay.
      const crashing = activitiesOn(crashingBeforeCommit(stack.api.db));
      await expect(environment.run(crashing.importSlice, ref(workspaceId, job.id))).rejects.toThrow('worker crashed');
      expect(await counts(workspaceId)).toEqual({ contacts: 2, identities: 2 });
      expect((await call('GET', `/imports/${job.id}`)).body).toMatchObject({ progress: { processed: 2 } });

      // The workers come back: the workflow, waiting all along, resumes from the checkpoint.
      await startWorkers();
      expect(await finished(call, job.id)).toMatchObject({ status: 'completed', progress: { total: 10, processed: 10, created: 10, updated: 0, failed: 0 } });
      expect(await counts(workspaceId)).toEqual({ contacts: 10, identities: 10 });
      expect(await contactOf(workspaceId, 'email', 'r9@example.com')).toMatchObject({ attributes: { name: 'Row 9' } });
    });
  });

  it('two attempts of a slice at once (a retry while the first still runs) write each batch once', async () => {
    const { workspaceId, call } = await workspace();
    await withWorkersStopped(async (startWorkers) => {
      const job = await startImport(call, { provider: 'csv', attachmentId: await upload(call, rows(21)), mapping: { email: 'email' } });
      const activities = activitiesOn(stack.api.db, { sliceMs: 60_000 });
      await new MockActivityEnvironment().run(activities.prepareImport, ref(workspaceId, job.id));
      const attempt = () => new MockActivityEnvironment().run(activities.importSlice, ref(workspaceId, job.id)) as Promise<ImportStep>;
      const attempts = await Promise.all([attempt(), attempt()]);
      // One attempt finishes the file; the one overtaken stops, leaving the job as it is.
      expect(attempts.map((attempt) => attempt.state)).toContain('completed');
      for (const attempt of attempts) expect(['completed', 'importing']).toContain(attempt.state);
      await startWorkers();
      expect(await finished(call, job.id)).toMatchObject({ status: 'completed', progress: { total: 21, processed: 21, created: 21, updated: 0, failed: 0 } });
      expect(await counts(workspaceId)).toEqual({ contacts: 21, identities: 21 });
    });
  });

  it('cancel stops an import between batches: nothing more is written, a repeat answers the same, an ended import refuses with 409', async () => {
    const { workspaceId, call } = await workspace();
    await withWorkersStopped(async (startWorkers) => {
      const job = await startImport(call, { provider: 'csv', attachmentId: await upload(call, rows(10)), mapping: { email: 'email' } });
      const environment = new MockActivityEnvironment();
      const activities = activitiesOn(stack.api.db);
      await environment.run(activities.prepareImport, ref(workspaceId, job.id));
      await environment.run(activities.importSlice, ref(workspaceId, job.id));
      const canceled = await call('POST', `/imports/${job.id}/cancel`);
      expect(canceled).toMatchObject({ status: 200, body: { status: 'canceled', phase: 'canceled', progress: { processed: 2 } } });
      expect(await environment.run(activities.importSlice, ref(workspaceId, job.id))).toEqual({ state: 'canceled' });
      expect(await counts(workspaceId)).toEqual({ contacts: 2, identities: 2 });
      expect(await call('POST', `/imports/${job.id}/cancel`)).toMatchObject({ status: 200, body: { status: 'canceled' } });

      // The workflow, run at last, finds the job canceled and ends with it; nothing more is written.
      await startWorkers();
      expect(await temporal.workflow.getHandle(`import:${job.id}`).result()).toBe('canceled');
    });
    expect(await counts(workspaceId)).toEqual({ contacts: 2, identities: 2 });
    const small = await startImport(call, { provider: 'csv', attachmentId: await upload(call, rows(1)), mapping: { email: 'email' } });
    expect(await finished(call, small.id)).toMatchObject({ status: 'completed' });
    expect(await call('POST', `/imports/${small.id}/cancel`)).toMatchObject({ status: 409, body: { error: 'conflict' } });
  });
});
