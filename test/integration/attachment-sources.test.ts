import { randomUUID } from 'node:crypto';
import { QueryTypes, type Sequelize } from 'sequelize';
import { type AttachmentSource, attachmentStorageKey } from '../../core/attachments';
import { AppError } from '../../core/errors';
import { loadConfig } from '../../core/config';
import { type BlobStore, blobStoreOptions, createBlobStore } from '../../db/blob-store';
import { findAttachment, insertAttachment, listAttachments } from '../../db/repositories/attachments';
import { createSequelize } from '../../db/sequelize';
import { createAttachmentFiles } from '../../db/attachment-files';
import { type AttachmentSources, createAttachmentSources } from '../../services/attachment-sources';
import { createTestWorkspace } from '../helpers/workspaces';
import { guardSockets, type SocketGuard, type StandInServer, standInResolver, startStandInServer } from '../helpers/ssrf-stand-in';

/** The module every send path uses for its `attachments`: accepted with the send, loaded when it goes out. */
describe('a send\'s attachment sources', () => {
  let db: Sequelize;
  let blobs: BlobStore;
  let server: StandInServer;
  let guard: SocketGuard;
  let sources: AttachmentSources;
  const files = () => createAttachmentFiles({ db, blobs });

  beforeAll(async () => {
    guard = guardSockets();
    const config = loadConfig(process.env);
    db = createSequelize(config.DATABASE_URL);
    blobs = createBlobStore(blobStoreOptions(config));
    server = await startStandInServer({
      '/brochure.pdf': (_req, res) => res.writeHead(200, { 'content-type': 'application/pdf' }).end('%PDF brochure'),
      '/chart': (_req, res) => res.writeHead(200, { 'content-type': 'image/png' }).end('PNG chart'),
      '/two-megabytes': (_req, res) => {
        // No Content-Length: the shared budget has to stop the body as it arrives.
        res.writeHead(200, { 'content-type': 'application/octet-stream' });
        for (let chunk = 0; chunk < 32; chunk += 1) res.write(Buffer.alloc(64 * 1024));
        res.end();
      },
    });
    sources = createAttachmentSources({
      db,
      blobs,
      fetch: { resolveHost: standInResolver({ 'files.test': ['127.0.0.1'], 'intranet.test': ['10.0.0.7'] }), testOnlyPublicLoopbackPort: server.port, ca: server.ca },
    });
  });
  afterAll(async () => {
    await server.close();
    blobs.close();
    await db.close();
    guard.restore();
  });

  async function refusal(workspaceId: string, items: AttachmentSource[]): Promise<string[]> {
    try {
      await sources.accept(workspaceId, items);
    } catch (error) {
      if (error instanceof AppError && error.code === 'validation_error') {
        return (error.details.issues as { fieldErrors: { attachments: string[] } }).fieldErrors.attachments;
      }
      throw error;
    }
    throw new Error('expected the attachments to be refused');
  }

  const rowCount = async (workspaceId: string) =>
    Number((await db.query<{ n: string }>('SELECT count(*) AS n FROM attachments WHERE workspace_id = $1', { bind: [workspaceId], type: QueryTypes.SELECT }))[0].n);

  it('id, content and url items resolve in order to stored attachments, and load back as their bytes', async () => {
    const { workspaceId } = await createTestWorkspace(db);
    const uploaded = await files().store(workspaceId, { filename: 'terms.pdf', contentType: 'application/pdf', bytes: Buffer.from('terms'), origin: 'upload' });
    const { refs } = await sources.accept(workspaceId, [
      { id: uploaded.id, filename: 'Terms and conditions.pdf' },
      { filename: 'note.txt', content: Buffer.from('a note').toString('base64') },
      { filename: 'brochure.pdf', url: `https://files.test:${server.port}/brochure.pdf` },
      { filename: 'chart.png', url: `https://files.test:${server.port}/chart`, contentId: 'chart' },
    ]);
    expect(refs).toEqual([
      { id: uploaded.id, filename: 'Terms and conditions.pdf', contentType: 'application/pdf', size: 5 },
      { id: expect.any(String), filename: 'note.txt', contentType: 'text/plain', size: 6 },
      { id: expect.any(String), filename: 'brochure.pdf', contentType: 'application/pdf', size: 13 },
      { id: expect.any(String), filename: 'chart.png', contentType: 'image/png', size: 9, contentId: 'chart' },
    ]);
    // Files stored from a send are attachments with ids, but not the workspace's uploads.
    expect((await listAttachments(db, workspaceId, { limit: 50, offset: 0 })).map((attachment) => attachment.id)).toEqual([uploaded.id]);
    expect(await findAttachment(db, workspaceId, refs[2].id)).toMatchObject({ origin: 'send', sourceUrl: `https://files.test:${server.port}/brochure.pdf` });

    const loaded = await sources.load(workspaceId, refs);
    expect(loaded.missing).toEqual([]);
    expect(loaded.attachments.map(({ filename, contentType, content, contentId }) => ({ filename, contentType, content: content.toString(), contentId }))).toEqual([
      { filename: 'Terms and conditions.pdf', contentType: 'application/pdf', content: 'terms', contentId: undefined },
      { filename: 'note.txt', contentType: 'text/plain', content: 'a note', contentId: undefined },
      { filename: 'brochure.pdf', contentType: 'application/pdf', content: '%PDF brochure', contentId: undefined },
      { filename: 'chart.png', contentType: 'image/png', content: 'PNG chart', contentId: 'chart' },
    ]);
  });

  it('discard removes the files a refused send stored, and leaves the uploads it reused', async () => {
    const { workspaceId } = await createTestWorkspace(db);
    const uploaded = await files().store(workspaceId, { filename: 'terms.pdf', contentType: 'application/pdf', bytes: Buffer.from('terms'), origin: 'upload' });
    const accepted = await sources.accept(workspaceId, [{ id: uploaded.id }, { filename: 'note.txt', content: Buffer.from('a note').toString('base64') }]);
    await accepted.discard();
    expect(await findAttachment(db, workspaceId, uploaded.id)).toMatchObject({ status: 'ready' });
    expect(await findAttachment(db, workspaceId, accepted.refs[1].id)).toMatchObject({ status: 'deleted' });
    expect((await sources.load(workspaceId, accepted.refs)).missing).toEqual([{ attachmentId: accepted.refs[1].id, filename: 'note.txt', reason: 'deleted' }]);
  });

  it('an uploaded attachment is reused by id across sends without copying it', async () => {
    const { workspaceId } = await createTestWorkspace(db);
    const uploaded = await files().store(workspaceId, { filename: 'logo.png', contentType: 'image/png', bytes: Buffer.from('logo'), origin: 'upload' });
    const first = (await sources.accept(workspaceId, [{ id: uploaded.id }])).refs;
    const second = (await sources.accept(workspaceId, [{ id: uploaded.id, contentId: 'logo' }])).refs;
    expect(first[0].id).toBe(uploaded.id);
    expect(second[0]).toEqual({ id: uploaded.id, filename: 'logo.png', contentType: 'image/png', size: 4, contentId: 'logo' });
    expect(await rowCount(workspaceId)).toBe(1);
  });

  it('the first use of a signed upload confirms it', async () => {
    const { workspaceId } = await createTestWorkspace(db);
    const { attachment, uploadUrl } = await files().startSignedUpload(workspaceId, { filename: 'data.json', contentType: 'application/json', size: 2 });
    await fetch(uploadUrl, { method: 'PUT', body: '{}', headers: { 'content-type': 'application/json' } });
    expect((await sources.accept(workspaceId, [{ id: attachment.id }])).refs).toEqual([
      { id: attachment.id, filename: 'data.json', contentType: 'application/json', size: 2 },
    ]);
    expect(await findAttachment(db, workspaceId, attachment.id)).toMatchObject({ status: 'ready' });
  });

  it('unknown, foreign, deleted and never-uploaded ids are refused, naming the item', async () => {
    const { workspaceId } = await createTestWorkspace(db);
    const other = await createTestWorkspace(db);
    const foreign = await files().store(other.workspaceId, { filename: 'x.txt', contentType: 'text/plain', bytes: Buffer.from('x'), origin: 'upload' });
    const deleted = await files().store(workspaceId, { filename: 'y.txt', contentType: 'text/plain', bytes: Buffer.from('y'), origin: 'upload' });
    await files().remove(workspaceId, deleted.id);
    const { attachment: pending } = await files().startSignedUpload(workspaceId, { filename: 'z.txt', contentType: 'text/plain', size: 1 });
    expect(await refusal(workspaceId, [{ id: randomUUID() }, { id: foreign.id }, { id: deleted.id }, { id: pending.id }])).toEqual([
      'attachments[0].id: no such attachment',
      'attachments[1].id: no such attachment',
      'attachments[2].id: no such attachment',
      expect.stringMatching(/^attachments\[3\]\.id: No file has been uploaded/),
    ]);
  });

  it('the message limits hold across items: 20 files, 25 MB together', async () => {
    const { workspaceId } = await createTestWorkspace(db);
    const note = { filename: 'n.txt', content: 'aGk=' };
    expect(await refusal(workspaceId, Array.from({ length: 21 }, () => note))).toEqual(['at most 20 attachments per message']);
    // Sizes are read from the rows, so large uploads can be stood in for without their bytes.
    const nineMegabytes = await Promise.all(
      [1, 2, 3].map(() => {
        const id = randomUUID();
        return insertAttachment(db, workspaceId, {
          id,
          filename: 'big.bin',
          contentType: 'application/octet-stream',
          size: 9 * 1024 * 1024,
          status: 'ready',
          origin: 'upload',
          sourceUrl: null,
          storageKey: attachmentStorageKey(workspaceId, id),
        });
      }),
    );
    const before = await rowCount(workspaceId);
    const problems = await refusal(workspaceId, [...nineMegabytes.map((attachment) => ({ id: attachment.id })), note]);
    expect(problems).toEqual([`the attachments add up to ${27 * 1024 * 1024 + 2} bytes; a message may carry ${25 * 1024 * 1024}`]);
    // Nothing of a refused send is stored.
    expect(await rowCount(workspaceId)).toBe(before);
  });

  it('URLs are fetched within what the message has left of its 25 MB', async () => {
    const { workspaceId } = await createTestWorkspace(db);
    const id = randomUUID();
    // A stored 24 MB leaves 1 MB for the URL's 2 MB.
    await insertAttachment(db, workspaceId, {
      id,
      filename: 'large.bin',
      contentType: 'application/octet-stream',
      size: 24 * 1024 * 1024,
      status: 'ready',
      origin: 'upload',
      sourceUrl: null,
      storageKey: attachmentStorageKey(workspaceId, id),
    });
    expect(await refusal(workspaceId, [{ id }, { filename: 'more.bin', url: `https://files.test:${server.port}/two-megabytes` }])).toEqual([
      'attachments[1].url: could not be fetched: the files together are larger than allowed',
    ]);
  });

  it('each item is checked: one source, a filename that is not executable, distinct content ids, a public URL', async () => {
    const { workspaceId } = await createTestWorkspace(db);
    const uploaded = await files().store(workspaceId, { filename: 'a.txt', contentType: 'text/plain', bytes: Buffer.from('a'), origin: 'upload' });
    expect(
      await refusal(workspaceId, [
        { filename: 'a.txt', content: 'aGk=', url: 'https://files.test/a.txt' },
        { content: 'aGk=' },
        { id: uploaded.id, filename: 'a.txt.exe' },
        { filename: 'c.txt', content: 'aGk=', contentId: 'same' },
        { filename: 'd.txt', content: 'aGk=', contentId: 'same' },
      ]),
    ).toEqual([
      'attachments[0]: give exactly one of id, content or url',
      'attachments[1].filename: required with content or url',
      'attachments[2].filename: executable files are not accepted (.exe)',
      'attachments[4].contentId: used twice in this message',
    ]);
    const attempts = guard.attempts.length;
    expect(await refusal(workspaceId, [{ filename: 'intranet.pdf', url: 'https://intranet.test/report.pdf' }])).toEqual([
      'attachments[0].url: could not be fetched: intranet.test is not allowed: a host must resolve to public addresses only',
    ]);
    expect(guard.attempts.slice(attempts).filter((attempt) => !attempt.endsWith(':55432') && !attempt.endsWith(':5056'))).toEqual([]);
  });

  it('at send time a deleted attachment is left out and reported, and the others still go', async () => {
    const { workspaceId } = await createTestWorkspace(db);
    const kept = await files().store(workspaceId, { filename: 'kept.txt', contentType: 'text/plain', bytes: Buffer.from('kept'), origin: 'upload' });
    const dropped = await files().store(workspaceId, { filename: 'dropped.txt', contentType: 'text/plain', bytes: Buffer.from('dropped'), origin: 'upload' });
    const refs = (await sources.accept(workspaceId, [{ id: kept.id }, { id: dropped.id }])).refs;
    await files().remove(workspaceId, dropped.id);
    const loaded = await sources.load(workspaceId, refs);
    expect(loaded.attachments.map((attachment) => attachment.filename)).toEqual(['kept.txt']);
    expect(loaded.missing).toEqual([{ attachmentId: dropped.id, filename: 'dropped.txt', reason: 'deleted' }]);
  });

  it('at send time a signed upload that never arrived is reported, not sent', async () => {
    const { workspaceId } = await createTestWorkspace(db);
    const { attachment } = await files().startSignedUpload(workspaceId, { filename: 'never.txt', contentType: 'text/plain', size: 5 });
    const loaded = await sources.load(workspaceId, [{ id: attachment.id, filename: 'never.txt', contentType: 'text/plain', size: 5 }]);
    expect(loaded).toEqual({ attachments: [], missing: [{ attachmentId: attachment.id, filename: 'never.txt', reason: 'not_uploaded' }] });
  });
});
