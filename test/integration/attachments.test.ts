import { attachmentStorageKey } from '../../core/attachments';
import { blobStoreOptions, type BlobStore, createBlobStore } from '../../db/blob-store';
import { type ApiHarness, type ApiResponse, startApi } from '../helpers/api-harness';
import { createTestKey, createTestWorkspace, type TestWorkspace } from '../helpers/workspaces';

interface AttachmentBody {
  id: string;
  filename: string;
  contentType: string;
  size: number;
  status: 'pending' | 'ready';
  createdAt: string;
}

/** Reuploads and downloads go straight to the S3 stand-in, as a client would. */
describe('attachments over HTTP, stored in the S3 stand-in', () => {
  let api: ApiHarness;
  let blobs: BlobStore;
  beforeAll(async () => {
    api = await startApi({ RATE_LIMIT_PER_SECOND: '1000' });
    blobs = createBlobStore(blobStoreOptions(api.config));
  });
  afterAll(async () => {
    blobs.close();
    await api.close();
  });

  const upload = (workspace: TestWorkspace, body: Record<string, unknown>): Promise<ApiResponse> =>
    api.call('POST', '/api/v1/attachments', { key: workspace.apiKey, body });

  async function signedUpload(workspace: TestWorkspace, file: { filename: string; contentType: string; size: number }) {
    const response = await upload(workspace, file);
    expect(response.status).toBe(201);
    return response.body as { attachment: AttachmentBody; uploadUrl: string; expiresIn: number };
  }

  const put = (url: string, bytes: Buffer, contentType: string) =>
    fetch(url, { method: 'PUT', body: bytes, headers: { 'content-type': contentType, 'content-length': String(bytes.length) } });

  async function download(workspace: TestWorkspace, id: string): Promise<{ attachment: AttachmentBody; bytes: Buffer; headers: Headers }> {
    const response = await api.call('GET', `/api/v1/attachments/${id}`, { key: workspace.apiKey });
    expect(response.status).toBe(200);
    const body = response.body as { attachment: AttachmentBody; downloadUrl: string };
    const file = await fetch(body.downloadUrl);
    expect(file.status).toBe(200);
    return { attachment: body.attachment, bytes: Buffer.from(await file.arrayBuffer()), headers: file.headers };
  }

  it('a direct upload is ready at once, with the type inferred from its name, and downloads as uploaded', async () => {
    const workspace = await createTestWorkspace(api);
    const bytes = Buffer.from('%PDF-1.7 invoice 42');
    const created = await upload(workspace, { filename: 'invoice-42.pdf', content: bytes.toString('base64') });
    expect(created).toMatchObject({
      status: 201,
      body: { attachment: { filename: 'invoice-42.pdf', contentType: 'application/pdf', size: bytes.length, status: 'ready' } },
    });
    const { attachment } = created.body as { attachment: AttachmentBody };
    expect(Object.keys(created.body as object)).toEqual(['attachment']);
    const downloaded = await download(workspace, attachment.id);
    expect(downloaded.bytes).toEqual(bytes);
    expect(downloaded.headers.get('content-disposition')).toContain('filename="invoice-42.pdf"');
    const list = await api.call('GET', '/api/v1/attachments', { key: workspace.apiKey });
    expect(list.body).toEqual({ data: [attachment] });
  });

  it('a signed upload: pending with a URL that pins type and length, PUT, confirm reconciles, download returns the bytes', async () => {
    const workspace = await createTestWorkspace(api);
    const bytes = Buffer.from('name,total\nAda,42\n');
    const { attachment, uploadUrl, expiresIn } = await signedUpload(workspace, { filename: 'report.csv', contentType: 'text/csv', size: bytes.length });
    expect(attachment).toMatchObject({ status: 'pending', size: bytes.length, contentType: 'text/csv' });
    expect(expiresIn).toBe(900);
    const signedHeaders = new URL(uploadUrl).searchParams.get('X-Amz-SignedHeaders')?.split(';');
    expect(signedHeaders).toEqual(expect.arrayContaining(['content-length', 'content-type', 'host']));
    expect(new URL(uploadUrl).searchParams.has('x-amz-checksum-crc32')).toBe(false);

    expect((await put(uploadUrl, bytes, 'text/csv')).status).toBe(200);
    const confirmed = await api.call('POST', `/api/v1/attachments/${attachment.id}/confirm`, { key: workspace.apiKey });
    expect(confirmed).toMatchObject({ status: 200, body: { attachment: { id: attachment.id, status: 'ready', size: bytes.length, contentType: 'text/csv' } } });
    // Confirming again changes nothing.
    expect((await api.call('POST', `/api/v1/attachments/${attachment.id}/confirm`, { key: workspace.apiKey })).body).toEqual(confirmed.body);
    expect((await download(workspace, attachment.id)).bytes).toEqual(bytes);
  });

  it('a file of another length than declared is refused at confirm and removed; a correct PUT may follow', async () => {
    const workspace = await createTestWorkspace(api);
    const { attachment, uploadUrl } = await signedUpload(workspace, { filename: 'photo.png', contentType: 'image/png', size: 10 });
    // The stand-in does not check presigned signatures (docs/aws-stand-in.md), so the wrong length gets stored...
    expect((await put(uploadUrl, Buffer.alloc(12, 1), 'image/png')).status).toBe(200);
    // ...and our own check refuses it.
    const refused = await api.call('POST', `/api/v1/attachments/${attachment.id}/confirm`, { key: workspace.apiKey });
    expect(refused).toMatchObject({
      status: 422,
      body: { error: 'attachment_rejected', reason: 'mismatch', message: expect.stringContaining('12 bytes but 10 were declared') },
    });
    expect(await blobs.head(attachmentStorageKey(workspace.workspaceId, attachment.id))).toBeNull();
    expect((await api.call('GET', `/api/v1/attachments/${attachment.id}`, { key: workspace.apiKey })).body).toMatchObject({
      attachment: { status: 'pending' },
    });

    expect((await put(uploadUrl, Buffer.alloc(10, 2), 'image/png')).status).toBe(200);
    expect(await api.call('POST', `/api/v1/attachments/${attachment.id}/confirm`, { key: workspace.apiKey })).toMatchObject({
      status: 200,
      body: { attachment: { status: 'ready', size: 10 } },
    });
  });

  it('a file of another type than declared is refused at confirm', async () => {
    const workspace = await createTestWorkspace(api);
    const { attachment, uploadUrl } = await signedUpload(workspace, { filename: 'a.pdf', contentType: 'application/pdf', size: 4 });
    await put(uploadUrl, Buffer.from('abcd'), 'text/html');
    expect(await api.call('POST', `/api/v1/attachments/${attachment.id}/confirm`, { key: workspace.apiKey })).toMatchObject({
      status: 422,
      body: { error: 'attachment_rejected', message: expect.stringContaining('uploaded as text/html but application/pdf was declared') },
    });
  });

  it('confirming before anything was uploaded is refused', async () => {
    const workspace = await createTestWorkspace(api);
    const { attachment } = await signedUpload(workspace, { filename: 'later.txt', contentType: 'text/plain', size: 3 });
    expect(await api.call('POST', `/api/v1/attachments/${attachment.id}/confirm`, { key: workspace.apiKey })).toMatchObject({
      status: 422,
      body: { error: 'attachment_rejected', reason: 'not_uploaded' },
    });
  });

  it('delete answers AttachmentDeleted, removes the file, and the attachment is gone for reads and a second delete', async () => {
    const workspace = await createTestWorkspace(api);
    const created = await upload(workspace, { filename: 'gone.txt', content: Buffer.from('bye').toString('base64') });
    const { attachment } = created.body as { attachment: AttachmentBody };
    expect(await api.call('DELETE', `/api/v1/attachments/${attachment.id}`, { key: workspace.apiKey })).toMatchObject({
      status: 200,
      body: { deleted: true, id: attachment.id },
    });
    expect(await blobs.head(attachmentStorageKey(workspace.workspaceId, attachment.id))).toBeNull();
    expect((await api.call('GET', `/api/v1/attachments/${attachment.id}`, { key: workspace.apiKey })).status).toBe(404);
    expect((await api.call('POST', `/api/v1/attachments/${attachment.id}/confirm`, { key: workspace.apiKey })).status).toBe(404);
    expect((await api.call('DELETE', `/api/v1/attachments/${attachment.id}`, { key: workspace.apiKey })).status).toBe(404);
    expect((await api.call('GET', '/api/v1/attachments', { key: workspace.apiKey })).body).toEqual({ data: [] });
  });

  it('another workspace\'s attachment answers 404 on every route and is not listed', async () => {
    const owner = await createTestWorkspace(api);
    const created = await upload(owner, { filename: 'private.txt', content: Buffer.from('secret').toString('base64') });
    const { attachment } = created.body as { attachment: AttachmentBody };
    const stranger = await createTestWorkspace(api);
    expect((await api.call('GET', `/api/v1/attachments/${attachment.id}`, { key: stranger.apiKey })).status).toBe(404);
    expect((await api.call('POST', `/api/v1/attachments/${attachment.id}/confirm`, { key: stranger.apiKey })).status).toBe(404);
    expect((await api.call('DELETE', `/api/v1/attachments/${attachment.id}`, { key: stranger.apiKey })).status).toBe(404);
    expect((await api.call('GET', '/api/v1/attachments', { key: stranger.apiKey })).body).toEqual({ data: [] });
    expect((await download(owner, attachment.id)).bytes.toString()).toBe('secret');
  });

  it('either send scope is enough; another scope is refused', async () => {
    const workspace = await createTestWorkspace(api);
    for (const scope of ['email:send', 'inbox:send'] as const) {
      const { apiKey } = await createTestKey(api, workspace.workspaceId, [scope]);
      expect((await api.call('GET', '/api/v1/attachments', { key: apiKey })).status).toBe(200);
    }
    const { apiKey } = await createTestKey(api, workspace.workspaceId, ['templates:write']);
    expect(await api.call('GET', '/api/v1/attachments', { key: apiKey })).toMatchObject({
      status: 403,
      body: { error: 'forbidden', need: 'email:send|inbox:send' },
    });
  });

  describe('limits', () => {
    let workspace: TestWorkspace;
    beforeAll(async () => {
      workspace = await createTestWorkspace(api);
    });
    const fieldErrors = (response: ApiResponse) => (response.body as { error: { fieldErrors: Record<string, string[]> } }).error.fieldErrors;

    it.each(['invoice.pdf.exe', 'SETUP.EXE', 'run.bat.', 'invoice\u202Efdp.exe', 'tool.jar', 'macro.vbs ', 'script.js'])(
      'an executable name (%j) is refused with 422, on both upload paths',
      async (filename) => {
        const direct = await upload(workspace, { filename, content: 'aGk=' });
        expect(direct.status).toBe(422);
        expect(fieldErrors(direct).filename[0]).toMatch(/executable files are not accepted/);
        const signed = await upload(workspace, { filename, contentType: 'application/pdf', size: 2 });
        expect(signed.status).toBe(422);
      },
    );

    it('an executable content type is refused', async () => {
      const response = await upload(workspace, { filename: 'report', contentType: 'application/x-msdownload', size: 10 });
      expect(fieldErrors(response).contentType).toEqual(['executable content types are not accepted']);
    });

    it('a file over 10 MB is refused on both paths', async () => {
      const tooBig = 10 * 1024 * 1024 + 1;
      expect((await upload(workspace, { filename: 'big.bin', content: Buffer.alloc(tooBig).toString('base64') })).status).toBe(422);
      expect(fieldErrors(await upload(workspace, { filename: 'big.bin', contentType: 'application/octet-stream', size: tooBig })).size).toBeDefined();
    });

    it('a file of exactly 10 MB is accepted', async () => {
      const response = await upload(workspace, { filename: 'max.bin', content: Buffer.alloc(10 * 1024 * 1024, 7).toString('base64') });
      expect(response).toMatchObject({ status: 201, body: { attachment: { size: 10 * 1024 * 1024, contentType: 'application/octet-stream' } } });
    });

    it('filename 1 to 255 characters, contentType 3 to 255', async () => {
      expect(fieldErrors(await upload(workspace, { filename: '', content: 'aGk=' })).filename).toBeDefined();
      expect(fieldErrors(await upload(workspace, { filename: `${'a'.repeat(252)}.txt`, content: 'aGk=' })).filename).toBeDefined();
      expect((await upload(workspace, { filename: `${'a'.repeat(251)}.txt`, content: 'aGk=' })).status).toBe(201);
      expect(fieldErrors(await upload(workspace, { filename: 'a.txt', contentType: 'a/', content: 'aGk=' })).contentType).toBeDefined();
    });

    it('content and size together, or neither, is refused; so is base64 with a data: prefix or stray characters', async () => {
      expect((await upload(workspace, { filename: 'a.txt', content: 'aGk=', size: 2 })).status).toBe(422);
      expect((await upload(workspace, { filename: 'a.txt' })).status).toBe(422);
      expect(fieldErrors(await upload(workspace, { filename: 'a.txt', content: 'data:text/plain;base64,aGk=' })).content).toEqual([
        'must be plain base64, without a data: prefix',
      ]);
      expect(fieldErrors(await upload(workspace, { filename: 'a.txt', content: 'aGk*' })).content).toEqual(['is not valid base64']);
    });
  });
});
