import { QueryTypes } from 'sequelize';
import { simpleParser } from 'mailparser';
import { suppressAddresses } from '../../db/repositories/suppressions';
import { startEmailStack, type EmailStack } from '../helpers/email-stack';
import { createTestWorkspace } from '../helpers/workspaces';
import { type StandInServer, standInResolver, startStandInServer } from '../helpers/ssrf-stand-in';

let stack: EmailStack;
let files: StandInServer;
const brochure = Buffer.from('%PDF-1.4 brochure from a public URL');

beforeAll(async () => {
  files = await startStandInServer({
    '/brochure.pdf': (_req, res) => res.writeHead(200, { 'content-type': 'application/pdf' }).end(brochure),
  });
  stack = await startEmailStack({
    attachmentFetch: { resolveHost: standInResolver({ 'files.test': ['127.0.0.1'] }), testOnlyPublicLoopbackPort: files.port, ca: files.ca },
  });
});
afterAll(async () => {
  await stack.close();
  await files.close();
});

describe('attachments on POST /emails', () => {
  it('an uploaded id, inline base64 content and a public URL all arrive as parts of the delivered message', async () => {
    const { apiKey, workspaceId, domain } = await createTestWorkspace(stack.api, { domain: true });
    const uploaded = await stack.api.call('POST', '/api/v1/attachments', {
      key: apiKey,
      body: { filename: 'terms.txt', content: Buffer.from('Terms and conditions').toString('base64') },
    });
    expect(uploaded.status).toBe(201);
    const attachmentId = (uploaded.body as { attachment: { id: string } }).attachment.id;

    const accepted = await stack.api.call('POST', '/api/v1/emails', {
      key: apiKey,
      body: {
        from: `a@${domain}`,
        to: 'files@example.org',
        subject: 'Your documents',
        html: '<p>Logo: <img src="cid:logo"></p>',
        attachments: [
          { id: attachmentId },
          { filename: 'logo.png', content: Buffer.from([0x89, 0x50, 0x4e, 0x47]).toString('base64'), contentId: 'logo' },
          { filename: 'brochure.pdf', url: `https://files.test:${files.port}/brochure.pdf` },
        ],
        idempotencyKey: `attachments-${Date.now()}`,
      },
    });
    expect(accepted.status).toBe(202);
    const id = (accepted.body as { id: string }).id;
    await stack.waitForStatus(workspaceId, id, ['sent']);

    const mail = stack.sink.received.find((received) => received.recipients.includes('files@example.org'));
    const parsed = await simpleParser(mail?.raw ?? '', { skipImageLinks: true });
    const parts = Object.fromEntries(parsed.attachments.map((part) => [part.filename, part]));
    expect(parts['terms.txt'].content.toString()).toBe('Terms and conditions');
    expect(parts['logo.png']).toMatchObject({ contentType: 'image/png', cid: 'logo', contentDisposition: 'inline' });
    expect(parts['brochure.pdf'].content.equals(brochure)).toBe(true);

    const status = await stack.api.call('GET', `/api/v1/emails/${id}`, { key: apiKey });
    const listed = (status.body as { attachments: Array<{ filename: string; size: number }> }).attachments;
    expect(listed.map((attachment) => attachment.filename).sort()).toEqual(['brochure.pdf', 'logo.png', 'terms.txt']);
    expect(listed.find((attachment) => attachment.filename === 'brochure.pdf')?.size).toBe(brochure.length);
  });

  it('an attachment deleted after acceptance is left out of the mail, and the sent event names it', async () => {
    const { apiKey, workspaceId, domain } = await createTestWorkspace(stack.api, { domain: true });
    const upload = (filename: string) =>
      stack.api.call('POST', '/api/v1/attachments', { key: apiKey, body: { filename, content: Buffer.from(filename).toString('base64') } });
    const [kept, dropped] = (await Promise.all([upload('kept.txt'), upload('dropped.txt')])).map(
      (response) => (response.body as { attachment: { id: string } }).attachment.id,
    );
    // Accepted while no worker runs, so the deletion surely comes before the send.
    await stack.stopWorkers();
    const accepted = await stack.api.call('POST', '/api/v1/emails', {
      key: apiKey,
      body: { from: `a@${domain}`, to: 'late-delete@example.org', subject: 'Files', text: 'T', attachments: [{ id: kept }, { id: dropped }], idempotencyKey: `late-delete-${Date.now()}` },
    });
    expect(accepted.status).toBe(202);
    expect((await stack.api.call('DELETE', `/api/v1/attachments/${dropped}`, { key: apiKey })).status).toBe(200);
    await stack.startWorkers();
    const id = (accepted.body as { id: string }).id;
    await stack.waitForStatus(workspaceId, id, ['sent']);

    const mail = stack.sink.received.find((received) => received.recipients.includes('late-delete@example.org'));
    const parsed = await simpleParser(mail?.raw ?? '');
    expect(parsed.attachments.map((part) => part.filename)).toEqual(['kept.txt']);
    const [sent] = await stack.api.db.query<{ data: unknown }>(`SELECT data FROM message_events WHERE message_id = $1 AND type = 'sent'`, {
      bind: [id],
      type: QueryTypes.SELECT,
    });
    expect(sent.data).toEqual({ missingAttachments: [{ attachmentId: dropped, filename: 'dropped.txt', reason: 'deleted' }] });
  });

  it('a send refused after its files were stored (every recipient suppressed) leaves no file behind', async () => {
    const { apiKey, workspaceId, domain } = await createTestWorkspace(stack.api, { domain: true });
    await suppressAddresses(stack.api.db, workspaceId, 'email', ['bounced@example.org'], 'hard_bounce');
    const refused = await stack.api.call('POST', '/api/v1/emails', {
      key: apiKey,
      body: {
        from: `a@${domain}`,
        to: 'bounced@example.org',
        subject: 'Files',
        text: 'T',
        attachments: [{ filename: 'note.txt', content: Buffer.from('note').toString('base64') }],
        idempotencyKey: `orphan-${Date.now()}`,
      },
    });
    expect(refused.status).toBe(409);
    // The file was stored (checks run before suppression) and then removed.
    const files = await stack.api.db.query<{ status: string }>('SELECT status FROM attachments WHERE workspace_id = $1', {
      bind: [workspaceId],
      type: QueryTypes.SELECT,
    });
    expect(files).toEqual([{ status: 'deleted' }]);
  });

  it('an executable attachment is refused with 422 and nothing is sent', async () => {
    const { apiKey, domain } = await createTestWorkspace(stack.api, { domain: true });
    const refused = await stack.api.call('POST', '/api/v1/emails', {
      key: apiKey,
      body: {
        from: `a@${domain}`,
        to: 'files@example.org',
        subject: 'S',
        text: 'T',
        attachments: [{ filename: 'invoice.pdf.exe', content: Buffer.from('MZ').toString('base64') }],
        idempotencyKey: `exe-${Date.now()}`,
      },
    });
    expect(refused).toMatchObject({ status: 422, body: { error: { fieldErrors: { attachments: [expect.stringContaining('.exe')] } } } });
    expect((await stack.api.call('GET', '/api/v1/emails', { key: apiKey })).body).toMatchObject({ total: 0 });
  });
});
