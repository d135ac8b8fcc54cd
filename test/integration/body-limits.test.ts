import { randomBytes, randomUUID } from 'node:crypto';
import { type ApiHarness, startApi } from '../helpers/api-harness';
import { createTestWorkspace } from '../helpers/workspaces';

/** With the default limits: 1 MiB for every body, 40 MiB where inline base64 files travel. */
describe('body limits per route', () => {
  let api: ApiHarness;
  beforeAll(async () => {
    api = await startApi({ MAX_BODY_BYTES: '', MAX_SEND_BODY_BYTES: '' });
  });
  afterAll(() => api.close());

  const twoMegabytesOfBase64 = () => randomBytes(1_500_000).toString('base64');

  it('a 2 MB body to POST /contacts answers 413 payload_too_large', async () => {
    const { apiKey } = await createTestWorkspace(api);
    const response = await api.as(apiKey)('POST', '/contacts', {
      identities: [{ channel: 'email', address: 'big@example.org' }],
      attributes: { notes: 'x'.repeat(2 * 1024 * 1024) },
    });
    expect(response).toMatchObject({ status: 413, body: { error: 'payload_too_large' } });
  });

  it('a send with a 2 MB inline attachment is accepted', async () => {
    const { apiKey, domain } = await createTestWorkspace(api, { domain: true });
    const response = await api.as(apiKey)('POST', '/emails', {
      from: `a@${domain}`,
      to: 'ann@example.org',
      subject: 'The report',
      text: 'Attached.',
      attachments: [{ filename: 'report.pdf', content: twoMegabytesOfBase64() }],
      idempotencyKey: `body-limit-${randomUUID()}`,
    });
    expect(response.status).toBe(202);
  });

  it('a batch and a direct upload of 2 MB are read too', async () => {
    const { apiKey, domain } = await createTestWorkspace(api, { domain: true });
    const batch = await api.as(apiKey)('POST', '/emails/batch', {
      emails: [{
        from: `a@${domain}`,
        to: 'ann@example.org',
        subject: 'The report',
        text: 'Attached.',
        attachments: [{ filename: 'report.pdf', content: twoMegabytesOfBase64() }],
        idempotencyKey: `body-limit-${randomUUID()}`,
      }],
    });
    expect(batch).toMatchObject({ status: 207, body: { accepted: 1 } });
    const upload = await api.as(apiKey)('POST', '/attachments', { filename: 'report.pdf', content: twoMegabytesOfBase64() });
    expect(upload.status).toBe(201);
  });

  it('the OpenAPI document names the limit of each route that takes a body', async () => {
    const document = (await api.call('GET', '/api/v1/openapi.json')).body as { paths: Record<string, Record<string, { responses: Record<string, { description: string }> }>> };
    expect(document.paths['/api/v1/emails'].post.responses['413'].description).toContain('MAX_SEND_BODY_BYTES');
    expect(document.paths['/api/v1/contacts'].post.responses['413'].description).toContain('MAX_BODY_BYTES');
  });
});
